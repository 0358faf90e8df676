import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// A zone's history as the commits write it: one entry a write, committed by its index word;
/// the writes go through the API, the history is read from the zone's files.
final class HistoryTests: XCTestCase {
    func testEveryWriteAppendsOneGaplessEntry() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a"), op(.create, "b")])
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "a")])
        let z = try t.zoneStore("Z")
        XCTAssertEqual(try z.history.head(), 3)
        var entries: [HistoryEntry] = []
        try z.history.forEachEntry(after: 0) { entries.append($0); return true }
        XCTAssertEqual(entries.map(\.seq), [1, 2, 3])
        XCTAssertEqual(entries.map(\.op), [.save, .save, .delete])
        XCTAssertEqual(entries.map(\.recordName), ["a", "b", "a"])
        XCTAssertEqual(entries.map(\.prev), [nil, nil, 1], "a delete names the entry of the version it ends")
        XCTAssertEqual(try z.history.lines(after: 2).map { $0["recordName"] }, ["a"])
        XCTAssertEqual(try z.history.lines(after: 0, limit: 1).count, 1)
    }

    func testFilesArePrivate() throws {
        let t = TempStore()
        _ = try t.client().modify(zone: "_defaultZone", operations: [op(.create, "a")])
        let fm = FileManager.default
        let e = fm.enumerator(atPath: t.root)!
        while let rel = e.nextObject() as? String {
            let attrs = try fm.attributesOfItem(atPath: t.root + "/" + rel)
            let mode = (attrs[.posixPermissions] as! Int) & 0o777
            let isDir = (attrs[.type] as? FileAttributeType) == .typeDirectory
            XCTAssertEqual(mode, isDir ? 0o700 : 0o600, rel)
        }
    }

    /// The index defines the history: log bytes or index words without a commit bit after them
    /// are not entries, readers never see them, and the next append cuts them first.
    func testOnlyCommittedEntriesExistAndTheNextAppendCutsTheRest() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a"), op(.create, "b")])
        let z = try t.zoneStore("Z")
        let logBefore = try FileSystem.read(z.history.logFile)!
        // A whole entry in the log, and its index word without the commit bit.
        let ghost = Array("{\"seq\":3,\"op\":\"delete\",\"recordName\":\"a\"}\n".utf8)
        try FileSystem.append(z.history.logFile, ghost)
        let word = UInt64(logBefore.count + ghost.count)
        try FileSystem.append(z.history.indexFile, (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64($0))) })
        XCTAssertEqual(try z.history.head(), 2)
        XCTAssertEqual(try z.history.lines(after: 0).count, 2)
        XCTAssertNotNil(try db.lookup(zone: "Z", recordNames: ["a"])[0].record, "an uncommitted delete deletes nothing")
        // The next commit takes seq 3, after cutting the ghost.
        _ = try db.modify(zone: "Z", operations: [op(.create, "c")])
        XCTAssertEqual(try z.history.lines(after: 0).map { $0["recordName"] }, ["a", "b", "c"])
        XCTAssertEqual(try z.history.entry(3)?.op, .save)
        XCTAssertFalse(String(decoding: try FileSystem.read(z.history.logFile)!, as: UTF8.self).contains("\"op\":\"delete\""))
        // A torn index word is no entry either.
        try FileSystem.append(z.history.indexFile, [0x80, 0, 0])
        XCTAssertEqual(try z.history.head(), 3)
        XCTAssertEqual(try z.history.cutUncommittedTail(repair: true).count, 1)
        XCTAssertEqual(try FileSystem.size(z.history.indexFile), 24)
    }

    /// A commit is visible whole or not at all, and the log, not the index, says what was
    /// committed: index words of a batch without the commit bit on the last one are not read,
    /// and the next writer indexes the batch again from the log, where each line proves itself
    /// whole; a batch whose last line is torn is cut instead.
    func testABatchIsVisibleOnlyWhenItsLastWordCarriesTheCommitBitAndTheLogRestoresIt() throws {
        let dir = NSTemporaryDirectory() + "ck-history-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let h = ChangeHistory(directory: dir)
        try h.append([["seq": 1, "recordName": "a"], ["seq": 2, "recordName": "b"], ["seq": 3, "recordName": "c"]])
        XCTAssertEqual(try h.head(), 3)
        // Clear the commit bit of the last word: readers no longer see the batch.
        var idx = try FileSystem.read(h.indexFile)!
        idx[16] &= 0x7F
        try FileSystem.writeAtomically(h.indexFile, idx)
        XCTAssertEqual(try h.head(), 0)
        XCTAssertEqual(try h.lines(after: 0).count, 0)
        // The log holds it whole: the next writer indexes it before its own entry.
        XCTAssertEqual(try h.append([["seq": 4, "recordName": "d"]]), 4)
        XCTAssertEqual(try h.lines(after: 0).map { $0["recordName"] }, ["a", "b", "c", "d"])
        // A last line torn (a power loss before the sync finished): that batch is cut whole.
        try h.append([["seq": 5, "recordName": "e"], ["seq": 6, "recordName": "f"]])
        let idx6 = try FileSystem.read(h.indexFile)!
        try FileSystem.writeAtomically(h.indexFile, Array(idx6.prefix(32)))
        let log = try FileSystem.read(h.logFile)!
        try FileSystem.writeAtomically(h.logFile, Array(log.dropLast(5)) + [0, 0, 0, 0, 0x0A])
        XCTAssertEqual(try h.append([["seq": 5, "recordName": "g"]]), 5)
        XCTAssertEqual(try h.lines(after: 0).map { $0["recordName"] }, ["a", "b", "c", "d", "g"])
    }

    /// An index pointing where the log does not hold its entry is damage, named, not data.
    func testAnIndexThatLiesIsReportedAsDamage() throws {
        let dir = NSTemporaryDirectory() + "ck-history-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let h = ChangeHistory(directory: dir)
        try h.append([["seq": 1, "recordName": "a"]])
        try h.append([["seq": 2, "recordName": "b"]])
        let log = try FileSystem.read(h.logFile)!
        try FileSystem.writeAtomically(h.logFile, Array(log.prefix(log.count - 3)) + Array("xx\n".utf8))
        XCTAssertThrowsError(try h.lines(after: 0)) { e in
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("damaged at entry 2") == true, "\(e)")
        }
        XCTAssertEqual(try h.lines(after: 0, limit: 1).count, 1, "entries before the damage still read")
    }
}
