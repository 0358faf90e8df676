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
            try log.forEachIndexed(after: 0, through: nil) { _, b in out.append(String(decoding: b, as: UTF8.self)); return true }
        } else {
            try log.forEachEntry(from: offset) { b, _ in out.append(String(decoding: b, as: UTF8.self)); return true }
        }
        return out
    }

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
        XCTAssertEqual(try log.append([entry(1), entry(2)]), AppendLog.Head(seq: 2, end: 20))
        XCTAssertEqual(try log.append([entry(3)]).seq, 3)
        XCTAssertEqual(String(decoding: bytes("history.log"), as: UTF8.self), "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n")
        // 8 bytes a word, the commit bit on the last of each commit.
        XCTAssertEqual(bytes("history.idx"), AppendLog.indexWord(end: 10, commits: false) + AppendLog.indexWord(end: 20, commits: true)
                                                 + AppendLog.indexWord(end: 30, commits: true))
        var seen: [Int64] = []
        try log.forEachIndexed(after: 1, through: nil) { seq, _ in seen.append(seq); return true }
        XCTAssertEqual(seen, [2, 3])
        XCTAssertEqual(try log.commitBounds(of: 1).after, 2)
        XCTAssertEqual(try log.commitBounds(of: 3).before, 2)
    }

    func testAnInterruptedIndexedAppendIsNeverReadAndIsCut() throws {
        let log = indexed()
        try log.append([entry(1)])
        // A crash after the log bytes and the index words, before the commit bit.
        appendRaw("history.log", entry(2) + [0x0A])
        appendRaw("history.idx", AppendLog.indexWord(end: 20, commits: false))
        XCTAssertEqual(try log.head().seq, 1)
        XCTAssertEqual(try read(log), ["{\"seq\":1}"])
        let found = try log.cutTail(repair: false)
        XCTAssertEqual(found.map(\.problem), ["history index holds 8 bytes after its last committed entry (a commit that never completed)",
                                              "history log holds 10 bytes after its last committed entry (a commit that never completed)"])
        XCTAssertEqual(bytes("history.log").count, 20, "a dry run cuts nothing")
        try log.cutTail()
        XCTAssertEqual(bytes("history.log").count, 10)
        XCTAssertEqual(bytes("history.idx").count, 8)
        XCTAssertTrue(try log.cutTail(repair: false).isEmpty)
        // The next append carries on from the committed head.
        XCTAssertEqual(try log.append([Array("{\"seq\":2,\"again\":1}".utf8)]).seq, 2)
        XCTAssertEqual(try read(log), ["{\"seq\":1}", "{\"seq\":2,\"again\":1}"])
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
            let big = Array(repeating: UInt8(ascii: "x"), count: 4096)
            XCTAssertThrowsError(try (log.commit.isRecorded ? recorded(head.end) : log).append([entry(2), big]), "\(files)")
            CrashPoints.reset()
            XCTAssertEqual(files.map(bytes), before, "\(files): a failed append leaves nothing behind")
            XCTAssertEqual(try read(log.commit.isRecorded ? recorded(head.end) : log), ["{\"seq\":1}"])
        }
    }
}

private extension AppendLog.Commit {
    var isRecorded: Bool { if case .recorded = self { return true } else { return false } }
}
