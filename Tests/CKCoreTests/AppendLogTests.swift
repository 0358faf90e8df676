import CKModel
import Foundation
import XCTest
@testable import CKStore

/// The append-only log itself, under each of its commits: what a torn tail, an interrupted
/// append and a full disk leave, and that reading and appending after a cut carry on as if the
/// interrupted append had never begun.
final class AppendLogTests: XCTestCase {
    private var directory = ""

    override func setUp() {
        directory = NSTemporaryDirectory() + "ck-appendlog-" + UUID().uuidString
    }

    override func tearDown() {
        CrashPoints.reset()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func indexed() -> AppendLog {
        AppendLog(directory: directory, name: "history.log", commit: .index(name: "history.idx", noun: "history index"), noun: "history log")
    }

    private func recorded(_ end: Int64) -> AppendLog {
        AppendLog(directory: directory, name: "log.ndjson", commit: .recorded(end: end), noun: "notification log")
    }

    private func wholeLines() -> AppendLog {
        AppendLog(directory: directory, name: "events.ndjson", commit: .wholeLines, noun: "account event log")
    }

    private func entry(_ seq: Int) -> [UInt8] { Array("{\"seq\":\(seq)}".utf8) }

    private func read(_ log: AppendLog, from offset: Int64 = 0) throws -> [String] {
        var out: [String] = []
        if case .index = log.commit {
            try log.forEachIndexed(after: 0, through: nil) { _, b in out.append(unframed(b)); return true }
        } else {
            try log.forEachEntry(from: offset) { b, _ in out.append(String(decoding: b, as: UTF8.self)); return true }
        }
        return out
    }

    /// An indexed log's line as its entry was given (its checksum and commit mark taken off).
    private func unframed(_ line: ArraySlice<UInt8>) -> String {
        var body = line.dropFirst(AppendLogFraming.prefixLength)
        if body.starts(with: AppendLogFraming.commitMember) { body = body.dropFirst(AppendLogFraming.commitMember.count) }
        return line.starts(with: Array("{\"check\"".utf8)) ? "{" + String(decoding: body, as: UTF8.self) : String(decoding: line, as: UTF8.self)
    }

    /// The line an indexed log writes for `entry`, with its newline.
    private func framed(_ e: [UInt8], commits: Bool) -> [UInt8] { AppendLogFraming.frame(e, commits: commits) + [0x0A] }

    private func bytes(_ name: String) -> [UInt8] { Array(FileManager.default.contents(atPath: directory + "/" + name) ?? Data()) }

    private func appendRaw(_ name: String, _ b: [UInt8]) {
        let h = FileHandle(forWritingAtPath: directory + "/" + name)!
        h.seekToEndOfFile()
        h.write(Data(b))
        h.closeFile()
    }

    // MARK: the index commit

    func testIndexedAppendsAreReadBySequenceWithTheirCommits() throws {
        let log = indexed()
        let one = framed(entry(1), commits: false), two = framed(entry(2), commits: true), three = framed(entry(3), commits: true)
        XCTAssertEqual(try log.append([entry(1), entry(2)]), AppendLog.Head(seq: 2, end: Int64(one.count + two.count)))
        XCTAssertEqual(try log.append([entry(3)]).seq, 3)
        // Each line: its checksum first, the last of each commit marked; still one JSON object.
        XCTAssertEqual(bytes("history.log"), one + two + three)
        XCTAssertEqual(String(decoding: two, as: UTF8.self), "{\"check\":\"\(String(AppendLogFraming.checksum(Array("\"commit\":true,\"seq\":2}".utf8)[...]), radix: 16))\",\"commit\":true,\"seq\":2}\n")
        XCTAssertEqual(try read(log), ["{\"seq\":1}", "{\"seq\":2}", "{\"seq\":3}"])
        // 8 bytes a word, the commit bit on the last of each commit.
        XCTAssertEqual(bytes("history.idx"), AppendLog.indexWord(end: Int64(one.count), commits: false)
                                                 + AppendLog.indexWord(end: Int64(one.count + two.count), commits: true)
                                                 + AppendLog.indexWord(end: Int64(one.count + two.count + three.count), commits: true))
        var seen: [Int64] = []
        try log.forEachIndexed(after: 1, through: nil) { seq, _ in seen.append(seq); return true }
        XCTAssertEqual(seen, [2, 3])
        XCTAssertEqual(try log.commitBounds(of: 1).after, 2)
        XCTAssertEqual(try log.commitBounds(of: 3).before, 2)
    }

    func testALineSaysWhetherItIsWhole() {
        let line = AppendLogFraming.frame(entry(7), commits: true)
        XCTAssertEqual(AppendLogFraming.verdict(line[...]), .whole(commits: true))
        XCTAssertEqual(AppendLogFraming.verdict(AppendLogFraming.frame(entry(7), commits: false)[...]), .whole(commits: false))
        XCTAssertEqual(AppendLogFraming.verdict(entry(7)[...]), .unframed, "a line written before checksums")
        XCTAssertEqual(AppendLogFraming.verdict(line.dropLast()), .torn, "cut short")
        var flipped = line
        flipped[flipped.count - 3] ^= 1
        XCTAssertEqual(AppendLogFraming.verdict(flipped[...]), .torn, "a byte changed")
        var zeroed = line
        for i in 40..<zeroed.count { zeroed[i] = 0 }
        XCTAssertEqual(AppendLogFraming.verdict(zeroed[...]), .torn, "a power loss's zeros")
    }

    func testAnInterruptedIndexedAppendIsNeverReadAndIsCut() throws {
        let log = indexed()
        try log.append([entry(1)])
        let committedEnd = Int64(bytes("history.log").count)
        // A crash part-way through writing a commit's lines (the second never whole), and index
        // bytes a crash left past the last committed word.
        appendRaw("history.log", framed(entry(2), commits: false) + Array(framed(entry(3), commits: true).prefix(12)))
        appendRaw("history.idx", AppendLog.indexWord(end: 99, commits: false))
        XCTAssertEqual(try log.head().seq, 1)
        XCTAssertEqual(try read(log), ["{\"seq\":1}"])
        let found = try log.cutTail(repair: false)
        XCTAssertEqual(found.map(\.problem), ["history index holds 8 bytes after its last committed entry (a commit that never completed)",
                                              "history log holds \(bytes("history.log").count - Int(committedEnd)) bytes after its last committed entry (a commit that never completed)"])
        XCTAssertEqual(bytes("history.idx").count, 16, "a dry run cuts nothing")
        try log.cutTail()
        XCTAssertEqual(Int64(bytes("history.log").count), committedEnd)
        XCTAssertEqual(bytes("history.idx").count, 8)
        XCTAssertTrue(try log.cutTail(repair: false).isEmpty)
        // The next append carries on from the committed head.
        XCTAssertEqual(try log.append([Array("{\"seq\":2,\"again\":1}".utf8)]).seq, 2)
        XCTAssertEqual(try read(log), ["{\"seq\":1}", "{\"seq\":2,\"again\":1}"])
    }

    func testACommitSyncedBeforeItsIndexWordsIsIndexedByTheNextWriter() throws {
        let log = indexed()
        try log.append([entry(1)])
        // A crash after the log's sync, before the index words: two whole commits, then a third
        // cut short. Readers go by the index: the commits are not seen yet.
        appendRaw("history.log", framed(entry(2), commits: false) + framed(entry(3), commits: true) + framed(entry(4), commits: true)
                                 + Array(framed(entry(5), commits: true).dropLast(3)))
        XCTAssertEqual(try log.head().seq, 1)
        XCTAssertEqual(try log.cutTail(repair: false).map(\.problem).first,
                       "history log holds 3 committed entries its index does not cover yet (a crash after their commit)")
        XCTAssertEqual(try log.head().seq, 1, "a dry run indexes nothing")
        // The next writer indexes them, cuts the torn line, and appends after them.
        XCTAssertEqual(try log.append([entry(5)]).seq, 5)
        XCTAssertEqual(try read(log), ["{\"seq\":1}", "{\"seq\":2}", "{\"seq\":3}", "{\"seq\":4}", "{\"seq\":5}"])
        XCTAssertEqual(try log.commitBounds(of: 2).after, 3, "2 and 3 are one commit, as written")
        XCTAssertTrue(try log.cutTail(repair: false).isEmpty)
    }

    func testATailLongerThanOneReadIsIndexedWhole() throws {
        let log = indexed()
        try log.append([entry(1)])
        // 300 commits of ~1 KiB each past the index: lines cross every 64 KiB read.
        var tail = [UInt8]()
        for seq in 2...301 {
            tail += framed(Array("{\"pad\":\"\(String(repeating: "x", count: 1000 + seq))\",\"seq\":\(seq)}".utf8), commits: seq % 3 == 1)
        }
        appendRaw("history.log", tail + Array(framed(entry(302), commits: true).prefix(7)))
        XCTAssertEqual(try log.append([entry(302)]).seq, 302, "the whole commits before the torn line, then the append")
        XCTAssertEqual(try read(log).count, 302)
        XCTAssertEqual(try log.commitBounds(of: 2).after, 4, "commits as they were marked")
    }

    func testLinesPastTheIndexThatAreNotWholeCommitsAreCutNotIndexed() throws {
        let log = indexed()
        try log.append([entry(1)])
        let committed = bytes("history.log")
        // Whole lines of a commit whose last line never came; a line out of sequence; a line
        // without a checksum (an earlier ck's, never committed).
        for tail in [framed(entry(2), commits: false), framed(entry(3), commits: true), entry(2) + [0x0A]] {
            appendRaw("history.log", tail)
            try log.cutTail()
            XCTAssertEqual(bytes("history.log"), committed)
            XCTAssertEqual(try log.head().seq, 1)
        }
    }

    func testALogShorterThanItsIndexIsDamageNoCutRepairs() throws {
        let log = indexed()
        try log.append([entry(1), entry(2)])
        try FileHandle(forWritingAtPath: directory + "/history.log")!.truncate(atOffset: 15)
        let found = try log.cutTail(repair: true)
        XCTAssertEqual(found.map(\.repairable), [false])
        XCTAssertThrowsError(try read(log)) { XCTAssertTrue($0 is AppendLog.Damage) }
    }

    // MARK: a recorded length

    func testARecordedLogReadsOnlyUpToWhatItsOwnerRecorded() throws {
        let first = try recorded(0).append([entry(1), entry(2)])
        XCTAssertEqual(first.end, 20)
        // Appended, but its owner never recorded the new end (a crash before state.json).
        let lost = try recorded(first.end).append([entry(3)])
        XCTAssertEqual(lost.end, 30)
        XCTAssertEqual(try read(recorded(first.end)), ["{\"seq\":1}", "{\"seq\":2}"])
        XCTAssertEqual(try read(recorded(first.end), from: 10), ["{\"seq\":2}"])
        XCTAssertEqual(try recorded(first.end).cutTail(repair: false).map(\.problem),
                       ["notification log holds 10 bytes after its committed end (a delivery that never completed)"])
        // The next append writes over what was never committed.
        XCTAssertEqual(try recorded(first.end).append([entry(4)]).end, 30)
        XCTAssertEqual(try read(recorded(30)), ["{\"seq\":1}", "{\"seq\":2}", "{\"seq\":4}"])
    }

    // MARK: whole lines

    func testATornLastLineIsNoEntryAndTheNextAppendCutsIt() throws {
        let log = wholeLines()
        try log.append([entry(1)])
        appendRaw("events.ndjson", Array("{\"seq\":2,\"sta".utf8))
        XCTAssertEqual(try log.head(), AppendLog.Head(seq: 1, end: 10))
        XCTAssertEqual(try read(log), ["{\"seq\":1}"])
        XCTAssertEqual(try log.cutTail(repair: false).map(\.problem), ["account event log ends in a torn line (13 bytes of an interrupted append)"])
        try log.append([entry(2)])
        XCTAssertEqual(String(decoding: bytes("events.ndjson"), as: UTF8.self), "{\"seq\":1}\n{\"seq\":2}\n")
        try log.rewrite([entry(2)])
        XCTAssertEqual(try read(log), ["{\"seq\":2}"])
    }

    // MARK: a full disk

    func testAFullDiskLeavesEveryLogAsItWas() throws {
        for (log, files) in [(indexed(), ["history.log", "history.idx"]), (recorded(0), ["log.ndjson"]), (wholeLines(), ["events.ndjson"])] {
            let head = try log.append([entry(1)])
            let before = files.map(bytes)
            // Every operation that needs space fails, a write after writing half its bytes.
            CrashPoints.noSpaceFromOperation = 1
            let big = Array("{\"seq\":3,\"x\":\"\(String(repeating: "x", count: 4096))\"}".utf8)
            XCTAssertThrowsError(try (log.commit.isRecorded ? recorded(head.end) : log).append([entry(2), big]), "\(files)")
            CrashPoints.reset()
            XCTAssertEqual(files.map(bytes), before, "\(files): a failed append leaves nothing behind")
            XCTAssertEqual(try read(log.commit.isRecorded ? recorded(head.end) : log), ["{\"seq\":1}"])
        }
    }
}

extension AppendLogTests {
    /// An append whose sync fails is cut back, and the cut is synced: the failed sync may have
    /// written the commit all the same, and a power loss must not bring it back whole.
    func testAnAppendWhoseSyncFailedIsCutAndTheCutSynced() throws {
        for (log, file) in [(indexed(), "history.log"), (wholeLines(), "events.ndjson")] {
            try log.append([entry(1)])
            let before = bytes(file)
            // The operations of an append, to find its sync.
            var ops: [(Int, String)] = []
            CrashPoints.trace = { ops.append(($0, $1)) }
            try log.append([entry(2)])
            CrashPoints.reset()
            let path = directory + "/" + file
            let sync = try XCTUnwrap(ops.first { $0.1 == "fsync " + path }?.0, "\(ops)")
            try log.cutUncommittedTailForTests(before: before.count, file: file)
            // The same append again, failing at its sync (operations counted afresh).
            var after: [String] = []
            CrashPoints.trace = { n, what in if n >= sync { after.append(what) } }
            CrashPoints.noSpaceFromOperation = sync
            XCTAssertThrowsError(try log.append([entry(2)]))
            CrashPoints.reset()
            XCTAssertEqual(after, ["fsync " + path, "truncate " + path, "fsync " + path], "\(file): the cut, then its sync")
            XCTAssertEqual(bytes(file), before)
        }
    }

    /// An index word is the entry's end offset, 8 bytes big-endian, the top bit its commit mark;
    /// the head is the last word carrying the mark, however many unmarked words follow it (a
    /// commit under way, or one a crash cut short before its last word).
    func testIndexWordsAreBigEndianAndTheHeadIsTheLastMarkedWord() throws {
        XCTAssertEqual(AppendLog.indexWord(end: 0x0102_0304_0506_0708, commits: false), [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(AppendLog.indexWord(end: 0x0102_0304_0506_0708, commits: true), [0x81, 2, 3, 4, 5, 6, 7, 8])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let log = indexed()
        for (count, marked) in [(1, 0), (7, 6), (8, 0), (9, 0), (30, 4), (600, 3), (600, 0)] {
            var words: [UInt8] = []
            for i in 0..<count { words += AppendLog.indexWord(end: Int64(10 * (i + 1)), commits: i == marked) }
            FileManager.default.createFile(atPath: directory + "/history.idx", contents: Data(words))
            let f = open(directory + "/history.idx", O_RDONLY)
            defer { close(f) }
            XCTAssertEqual(try log.readIndex(f, from: 0, count: Int64(count)).map { $0 & ~AppendLog.commitBit },
                           (0..<count).map { UInt64(10 * ($0 + 1)) })
            let head = try log.indexedHead(f, size: Int64(words.count))
            XCTAssertEqual(head.seq, Int64(marked + 1), "\(count) words, marked at \(marked)")
            XCTAssertEqual(head.end, Int64(10 * (marked + 1)))
        }
        // No word marked: no commit.
        let none = (0..<20).flatMap { AppendLog.indexWord(end: Int64($0 + 1), commits: false) }
        FileManager.default.createFile(atPath: directory + "/history.idx", contents: Data(none))
        let f = open(directory + "/history.idx", O_RDONLY)
        defer { close(f) }
        XCTAssertEqual(try log.indexedHead(f, size: Int64(none.count)).seq, 0)
    }
}

private extension AppendLog {
    /// Puts a log back to its first `before` bytes (and an indexed one's index to its one entry).
    func cutUncommittedTailForTests(before: Int, file: String) throws {
        _ = truncate(directory + "/" + file, off_t(before))
        if case .index(let idx, _) = commit { _ = truncate(directory + "/" + idx, 8) }
    }
}

private extension AppendLog.Commit {
    var isRecorded: Bool { if case .recorded = self { return true } else { return false } }
}

extension AppendLogTests {
    /// Entries another log's commit relies on (a database entry, once its zone's commit is
    /// made: `keepsOnceReady`) are never taken back: an index word that cannot be written
    /// leaves them whole and synced, and the next holder of the lock indexes them. Without the
    /// flag, or when `beforeIndexing` fails, the append is taken back as before.
    func testEntriesReliedOnOnceReadyStayWhenTheirIndexWordCannotBeWritten() throws {
        for (keeps, readyFails) in [(true, false), (false, false), (true, true)] {
            try? FileManager.default.removeItem(atPath: directory)
            let log = indexed()
            try log.append([entry(1)])
            // The operations of an append, to find its index write.
            var ops: [(Int, String)] = []
            CrashPoints.trace = { ops.append(($0, $1)) }
            try log.append([entry(2)])
            CrashPoints.reset()
            let indexWrite = try XCTUnwrap(ops.first { $0.1 == "write " + directory + "/history.idx" }?.0, "\(ops)")
            // The same append again, from one entry, failing at its index write.
            try FileManager.default.removeItem(atPath: directory)
            try log.append([entry(1)])
            var ran = false
            CrashPoints.noSpaceFromOperation = indexWrite
            let outcome = Result {
                try log.append([entry(2)], in: try Directory.open(directory)!, beforeIndexing: {
                    ran = true
                    if readyFails { throw CloudKitError.internalError("the commit it announces failed") }
                }, keepsOnceReady: keeps)
            }
            CrashPoints.reset()
            XCTAssertTrue(ran)
            if keeps && !readyFails {
                XCTAssertEqual(try outcome.get().seq, 2, "relied on: the append stands")
                XCTAssertEqual(try log.head().seq, 1, "not indexed yet")
                XCTAssertEqual(try log.cutTail(repair: true).map(\.problem).count, 1, "the next holder of the lock indexes it")
                XCTAssertEqual(try read(log), ["{\"seq\":1}", "{\"seq\":2}"])
            } else {
                XCTAssertThrowsError(try outcome.get())
                XCTAssertEqual(try read(log), ["{\"seq\":1}"], "keeps \(keeps), ready fails \(readyFails): taken back")
                XCTAssertEqual(try log.cutTail(repair: false).count, 0, "nothing left beyond the head")
            }
        }
    }
}
