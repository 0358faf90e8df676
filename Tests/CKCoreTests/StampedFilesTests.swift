import CKJSON
import CKModel
import XCTest
@testable import CKCore
@testable import CKStore

/// What a long-lived process keeps of small files is never staler than the files: a file
/// replaced (as every writer replaces them, by rename), removed, or swapped for a link is read
/// afresh.
final class StampedFilesTests: XCTestCase {
    /// Each test's own directory, removed after it.
    private var dir = ""

    override func setUp() {
        dir = NSTemporaryDirectory() + "ck-stamped-" + UUID().uuidString
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testAReplacedRemovedOrLinkedFileIsReadAfresh() throws {
        let path = dir + "/a.json"
        let files = StampedFiles()
        XCTAssertNil(try files.readJSON(path), "absent")
        try FileSystem.writeJSON(path, ["v": 1])
        XCTAssertEqual(try files.readJSON(path), ["v": 1])
        // Same size, written within the same moment: a new inode all the same.
        try FileSystem.writeJSON(path, ["v": 2])
        XCTAssertEqual(try files.readJSON(path), ["v": 2])
        // A listing follows entries added.
        XCTAssertEqual(try files.list(dir), ["a.json"])
        try FileSystem.writeJSON(dir + "/b.json", ["v": 3])
        XCTAssertEqual(try files.list(dir), ["a.json", "b.json"])
        // A link put in its place is refused by the careful read, not served from memory.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dir + "/b.json")
        XCTAssertThrowsError(try files.readJSON(path))
        try FileManager.default.removeItem(atPath: path)
        XCTAssertNil(try files.readJSON(path), "removed")
        // A parsed value is made once per version of the file.
        var parses = 0
        try FileSystem.writeJSON(path, ["v": 4])
        settle()
        for _ in 0..<3 { _ = try files.value(path) { parses += 1; return parses } }
        XCTAssertEqual(parses, 1)
        try FileSystem.writeJSON(path, ["v": 5])
        XCTAssertEqual(try files.value(path) { parses += 1; return parses }, 2)
    }

    /// A server's threads read the same kept file at once while another process replaces it:
    /// each read gives a whole version, never one older than a version that reader saw, and
    /// once the writes stop, every reader sees the last.
    func testThreadsReadingAKeptFileWhileItIsReplacedSeeWholeVersionsInOrder() throws {
        let path = dir + "/a.json"
        let files = StampedFiles()
        try FileSystem.writeJSON(path, ["v": 0])
        let versions = 300
        let failures = NSLock()
        var wrong: [String] = []
        DispatchQueue.concurrentPerform(iterations: 9) { thread in
            if thread == 0 {
                for v in 1...versions { try? FileSystem.writeJSON(path, ["v": .int(Int64(v))]) }
                return
            }
            var last: Int64 = 0
            for _ in 0..<2_000 {
                let v = (try? files.value(path) { try FileSystem.readJSON(path)?["v"]?.int64Value }) ?? nil
                guard let v = v ?? nil, v >= last, v <= Int64(versions) else {
                    failures.lock(); wrong.append("thread \(thread) read \(String(describing: v)) after \(last)"); failures.unlock()
                    return
                }
                last = v
            }
        }
        XCTAssertEqual(wrong, [])
        settle()
        XCTAssertEqual(try files.value(path) { try FileSystem.readJSON(path)?["v"]?.int64Value } ?? nil, Int64(versions))
    }

    /// Only small record files are kept, and only by a long-lived process.
    func testOnlySmallRecordFilesAreKept() throws {
        let files = StampedFiles()
        try FileSystem.writeAtomically(dir + "/small.json", Array(repeating: 0x20, count: 100))
        try FileSystem.writeAtomically(dir + "/big.json", Array(repeating: 0x20, count: Int(StampedFiles.smallFile) + 1))
        settle()
        var reads = 0
        // A command keeps none: it reads each record once, and the stamp would be an lstat more.
        XCTAssertTrue(try files.record(dir + "/small.json") { reads += 1; return nil } == nil, "not kept by a command")
        XCTAssertEqual(reads, 0)
        // A server does, once it says so (CloudKitStore of an API with a server URL).
        files.keepRecords()
        for _ in 0..<2 { _ = try files.record(dir + "/small.json") { reads += 1; return nil } }
        XCTAssertEqual(reads, 1)
        // nil outside (not kept, or no file): the caller reads it.
        XCTAssertTrue(try files.record(dir + "/big.json") { reads += 1; return nil } == nil, "not kept: the caller reads it")
        XCTAssertTrue(try files.record(dir + "/absent.json") { reads += 1; return nil } == nil)
        XCTAssertEqual(reads, 1)
    }

    /// A server takes an unmoved write counter for a check of every file it keeps, absent ones
    /// included: a file changed behind ck's back (no write counted) is not even looked at until
    /// a write is counted, or until the trust runs out.
    func testAnUnmovedWriteCounterStandsForACheckForAWhile() throws {
        let path = dir + "/a.json", absent = dir + "/b.json"
        let counter = WriteCounter.unshared()
        // Trusted for a minute: every step below is well within it, however slow the machine.
        let files = StampedFiles(trustNanos: 60_000_000_000)
        files.trustWriteCounter(under: dir, counter)
        try FileSystem.writeJSON(path, ["v": 1])
        settle()
        XCTAssertEqual(try files.readJSON(path), ["v": 1])
        XCTAssertNil(try files.readJSON(absent))
        XCTAssertTrue(files.isAbsent(absent))
        XCTAssertNil(try files.value(absent) { 1 })
        XCTAssertEqual(try files.value(path) { try FileSystem.readJSON(path)?["v"]?.int64Value }, 1)
        // Behind ck's back: no write counted, so nothing is looked at...
        try handWrite(path, #"{"v":2}"#)
        try handWrite(absent, #"{"v":3}"#)
        XCTAssertEqual(try files.readJSON(path), ["v": 1], "vouched for: not looked at")
        XCTAssertEqual(try files.value(path) { try FileSystem.readJSON(path)?["v"]?.int64Value }, 1, "vouched for: not looked at")
        XCTAssertNil(try files.readJSON(absent))
        XCTAssertTrue(files.isAbsent(absent))
        XCTAssertNil(try files.value(absent) { 1 })
        // ...until a write of a file of that name is counted (another name's changes nothing),
        counter.advance(slot: WriteCounter.slot("c.json"))
        XCTAssertEqual(try files.readJSON(path), ["v": 1], "another name's write")
        counter.advance(slot: WriteCounter.slot("a.json"))
        XCTAssertEqual(try files.readJSON(path), ["v": 2])
        XCTAssertNil(try files.readJSON(absent), "b.json's counter has not moved")
        // or a change of a tree (counter 0), which moves every file's.
        counter.advance(slot: 0)
        XCTAssertEqual(try files.readJSON(absent), ["v": 3])
        XCTAssertEqual(try files.list(dir), ["a.json", "b.json"])
        XCTAssertFalse(files.isAbsent(absent))
        XCTAssertEqual(try files.value(absent) { 1 }, 1)
        // or until the trust runs out.
        let brief = StampedFiles(trustNanos: 100_000_000)
        brief.trustWriteCounter(under: dir, counter)
        settle()
        XCTAssertEqual(try files.readJSON(path), ["v": 2])
        XCTAssertEqual(try brief.readJSON(path), ["v": 2])
        try handWrite(path, #"{"v":4}"#)
        usleep(150_000)
        XCTAssertEqual(try brief.readJSON(path), ["v": 4], "a hand edit is seen once the trust runs out")
        XCTAssertEqual(try files.readJSON(path), ["v": 2], "and not before")
        // Outside the data directory it is trusted for, every read checks its stamp.
        let outside = dir + "-elsewhere/a.json"
        defer { try? FileManager.default.removeItem(atPath: dir + "-elsewhere") }
        try FileSystem.writeJSON(outside, ["v": 1])
        settle()
        XCTAssertEqual(try files.readJSON(outside), ["v": 1])
        try handWrite(outside, #"{"v":2}"#)
        XCTAssertEqual(try files.readJSON(outside), ["v": 2])
    }

    /// A listing kept only by the counters: never trusted past them by the directory's stamp,
    /// which an entry made in the same tick of a coarse clock leaves as it was.
    func testAVouchedListingIsListedAgainOnceACountedWriteOrTheTrustEnds() throws {
        let intents = dir + "/intents"
        let counter = WriteCounter.unshared()
        let files = StampedFiles(trustNanos: 200_000_000)
        files.trustWriteCounter(under: dir, counter)
        try FileManager.default.createDirectory(atPath: intents, withIntermediateDirectories: true)
        settle()
        XCTAssertEqual(try files.listWhileVouched(intents), [])
        try handWrite(intents + "/B.json", "{}")
        XCTAssertEqual(try files.listWhileVouched(intents), [], "vouched for: not listed again")
        counter.advance(slot: WriteCounter.slot("intents"))
        XCTAssertEqual(try files.listWhileVouched(intents), ["B.json"], "a counted entry of intents/")
        // An entry the counters never see, the directory's stamp put back as it was (a coarse
        // clock's same tick): seen once the trust runs out all the same.
        var before = stat()
        XCTAssertEqual(stat(intents, &before), 0)
        try handWrite(intents + "/C.json", "{}")
        var times = [before.st_atim, before.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, intents, &times, 0), 0)
        XCTAssertEqual(try files.listWhileVouched(intents), ["B.json"])
        usleep(250_000)
        XCTAssertEqual(try files.listWhileVouched(intents), ["B.json", "C.json"])
        // Without trusted counters (a command), listed every time.
        let command = StampedFiles()
        XCTAssertEqual(try command.listWhileVouched(intents), ["B.json", "C.json"])
        try handWrite(intents + "/D.json", "{}")
        XCTAssertEqual(try command.listWhileVouched(intents), ["B.json", "C.json", "D.json"])
    }

    /// A counters' file removed or replaced while a server runs (systemd-logind removes a
    /// user's /dev/shm files at logout; new ck processes then count in a new one) would never
    /// move again: the server finds it out within its trust, and trusts it no more.
    func testACountersFileRemovedIsTrustedNoMore() throws {
        let shm = dir + "-counters"
        defer { unlink(shm) }
        let path = dir + "/a.json"
        let counter = try XCTUnwrap(WriteCounter.map(shm))
        XCTAssertTrue(counter.stillShared())
        let files = StampedFiles(trustNanos: 50_000_000)
        files.trustWriteCounter(under: dir, counter)
        try FileSystem.writeJSON(path, ["v": 1])
        settle()
        XCTAssertEqual(try files.readJSON(path), ["v": 1])
        XCTAssertEqual(unlink(shm), 0)
        XCTAssertFalse(counter.stillShared())
        usleep(60_000)
        XCTAssertEqual(try files.readJSON(path), ["v": 1], "checked again: the counters' file is found gone")
        try handWrite(path, #"{"v":2}"#)
        XCTAssertEqual(try files.readJSON(path), ["v": 2], "trusted no more: every read checks its stamp")
        // One made again under the name is not the file mapped.
        XCTAssertNotNil(WriteCounter.map(shm))
        XCTAssertFalse(counter.stillShared())
    }

    /// Every way ck changes a file or a directory counts the write: a server trusting the shared
    /// counter sees each change at once. (Another process's writes can only move the counter
    /// more, so this fails only when a primitive does not count.)
    func testEveryWayCkChangesAFileCountsTheWrite() throws {
        guard let counter = WriteCounter.shared else { throw XCTSkip("no shared write counter here (/dev/shm)") }
        let files = StampedFiles()
        files.trustWriteCounter(under: dir, counter)
        let d = try XCTUnwrap(Directory.open(dir, create: true))
        func json(_ v: Int) -> [UInt8] { Array(#"{"v":\#(v)}"#.utf8) }
        func seen(_ name: String) throws -> JSONValue? { try files.readJSON(dir + "/" + name) }
        // Each step: everything kept and settled, then one change, then what a server sees.
        func step(_ change: () throws -> Void, _ check: () throws -> Void) throws {
            for n in try FileSystem.list(dir) { _ = try? seen(n) }
            _ = try files.list(dir)
            settle()
            for n in try FileSystem.list(dir) { _ = try? seen(n) }
            _ = try files.list(dir)
            try change()
            try check()
        }
        try step({ try d.write("a.json", json(1)) }, { XCTAssertEqual(try seen("a.json"), ["v": 1]) })
        try step({ try d.write("a.json", json(22)) }, { XCTAssertEqual(try seen("a.json"), ["v": 22]) })
        try step({ try d.publish(try d.prepare(json(3)), as: "a.json") }, { XCTAssertEqual(try seen("a.json"), ["v": 3]) })
        try step({ try d.link("a.json", as: "b.json") }, { XCTAssertEqual(try seen("b.json"), ["v": 3]) })
        try step({ try d.remove("b.json") }, { XCTAssertNil(try seen("b.json")) })
        try step({ try d.write("c.json", json(4), durable: false); try d.rename("c.json", to: "a.json") },
                 { XCTAssertEqual(try seen("a.json"), ["v": 4]) })
        try step({ try d.write("a.json", Array("12".utf8)) }, { XCTAssertEqual(try seen("a.json"), 12) })
        try step({ try d.append("a.json", Array("3".utf8)) }, { XCTAssertEqual(try seen("a.json"), 123) })
        try step({ try d.truncate("a.json", to: 2) }, { XCTAssertEqual(try seen("a.json"), 12) })
        try step({
            let f = try d.openForWriting("a.json")
            defer { close(f) }
            try FileSystem.overwrite(f, Array("99".utf8), offset: 0, path: dir + "/a.json")
        }, { XCTAssertEqual(try seen("a.json"), 99) })
        try step({ _ = try Directory.open(dir + "/sub", create: true) }, { XCTAssertTrue(try files.list(dir).contains("sub")) })
        try step({ d.removeIfEmpty("sub") }, { XCTAssertFalse(try files.list(dir).contains("sub")) })
        let other = try XCTUnwrap(Directory.open(dir + "/other", create: true))
        try step({ try other.write("m.json", json(6)); try other.move("m.json", to: d, as: "a.json") },
                 { XCTAssertEqual(try seen("a.json"), ["v": 6]) })
    }

    /// Writes a file and renames it into place, as an editor or a script would: no write is
    /// counted.
    private func handWrite(_ path: String, _ text: String) throws {
        let tmp = path + ".hand"
        try Data(text.utf8).write(to: URL(fileURLWithPath: tmp))
        XCTAssertEqual(rename(tmp, path), 0)
    }

    /// Waits out the window in which a just-changed file is read but not kept.
    private func settle() { usleep(UInt32(StampedFiles.racyWindowNanos / 1000) + 10_000) }

    /// A file changed within the last moments is read afresh every time: a second change in the
    /// same tick of the file clock could leave its stamp as it was ("racy git"). Once its change
    /// is safely past, it is kept.
    /// Times in whole seconds (no nanoseconds: ext3, HFS+, FAT) hide a change made in the same
    /// second, or two: such a stamp is racy that long; one with nanoseconds, 20 ms.
    func testAStampInWholeSecondsIsRacyForTwoSeconds() {
        let second: Int64 = 1_000_000_000
        let now = 1_800_000_000 * second + 700_000_000
        func stamp(_ changed: Int64, nanos: Int64) -> StampedFiles.Stamp {
            StampedFiles.Stamp(device: 1, inode: 2, size: 3, modified: changed, modifiedNanos: nanos, changed: changed, changedNanos: nanos)
        }
        XCTAssertTrue(StampedFiles.isRacy(stamp(1_800_000_000, nanos: 0), now: now), "changed this second, shown as its start")
        XCTAssertTrue(StampedFiles.isRacy(stamp(1_799_999_999, nanos: 0), now: now))
        XCTAssertTrue(StampedFiles.isRacy(stamp(1_799_999_998, nanos: 0), now: 1_800_000_000 * second + 10_000_000), "2.01 s ago at most")
        XCTAssertFalse(StampedFiles.isRacy(stamp(1_799_999_998, nanos: 0), now: now), "2.7 s ago at least")
        XCTAssertFalse(StampedFiles.isRacy(stamp(1_800_000_000, nanos: 600_000_000), now: now), "100 ms ago, to the nanosecond")
        XCTAssertTrue(StampedFiles.isRacy(stamp(1_800_000_000, nanos: 690_000_000), now: now))
    }

    func testAJustChangedFileIsNotKept() throws {
        let path = dir + "/a.json"
        let files = StampedFiles()
        try FileSystem.writeJSON(path, ["v": 1])
        var parses = 0
        for _ in 0..<3 { _ = try files.value(path) { parses += 1; return parses } }
        XCTAssertEqual(parses, 3, "racy: read each time")
        settle()
        for _ in 0..<3 { _ = try files.value(path) { parses += 1; return parses } }
        XCTAssertEqual(parses, 4, "settled: read once more, then kept")
    }

    /// A history head is kept only when the index held no word past it: an uncommitted tail
    /// gains its commit bit in place, with no new inode or size to show it.
    func testAHistoryHeadIsKeptOnlyForAWhollyCommittedIndex() throws {
        let index = dir + "/history.idx"
        try FileSystem.writeAtomically(index, [UInt8](repeating: 0, count: 16))
        settle()
        let files = StampedFiles()
        var reads = 0
        XCTAssertNil(files.historyHead(dir + "/absent.idx") { reads += 1; return 0 })
        for _ in 0..<2 { XCTAssertEqual(files.historyHead(index) { reads += 1; return 1 }, 1) }
        XCTAssertEqual(reads, 2, "one of two words committed: asked every time")
        for _ in 0..<2 { XCTAssertEqual(files.historyHead(index) { reads += 1; return 2 }, 2) }
        XCTAssertEqual(reads, 3, "both committed: kept")
    }

    /// The head a long-lived reader gets is the history's after every commit, however quick
    /// the commits follow each other, and after an uncommitted tail is committed in place.
    func testAHistoryHeadFollowsCommitsAndAnInPlaceCommitBit() throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let h = ChangeHistory(directory: dir)
        XCTAssertEqual(try h.head(), 0)
        for i in 1...5 {
            try h.append([["seq": .int(Int64(i))]])
            XCTAssertEqual(try h.head(), Int64(i))
        }
        settle()
        XCTAssertEqual(try h.head(), 5)
        XCTAssertEqual(try h.head(), 5, "kept")
        // A sixth entry's word written without its commit bit (a commit under way), then the bit.
        let log = try Data(contentsOf: URL(fileURLWithPath: h.logFile))
        let line = Array("{\"seq\":6}\n".utf8)
        try (log + Data(line)).write(to: URL(fileURLWithPath: h.logFile))
        let end = UInt64(log.count + line.count)
        var word = (0..<8).map { UInt8((end >> UInt64(56 - 8 * $0)) & 0xff) }
        let f = open(h.indexFile, O_WRONLY)
        defer { close(f) }
        XCTAssertEqual(pwrite(f, word, 8, 5 * 8), 8)
        settle()
        XCTAssertEqual(try h.head(), 5, "uncommitted")
        XCTAssertEqual(try h.head(), 5)
        word[0] |= 0x80
        XCTAssertEqual(pwrite(f, [word[0]], 1, 5 * 8), 1)
        XCTAssertEqual(try h.head(), 6, "the commit bit, set in place, is seen at once")
    }
}
