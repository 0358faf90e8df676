import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// A commit syncs its history's log and only then writes the index words, unsynced (issue 38).
/// A crash between the two leaves a durable commit the index does not cover: whoever holds the
/// lock next must count it before deciding anything from the history — numbering entries,
/// finding whether an intent was recorded — or it would number over it or record it twice.
final class HistoryRecoveryTests: XCTestCase {
    /// Drops the last `n` words of a history's index: what a crash after the log's sync, before
    /// the index words, leaves.
    private func unindexLast(_ h: ChangeHistory, _ n: Int = 1) throws {
        let idx = try XCTUnwrap(FileSystem.read(h.indexFile))
        try FileSystem.writeAtomically(h.indexFile, Array(idx.prefix(idx.count - 8 * n)))
    }

    private func databaseEntries(_ db: Database) throws -> [String] {
        try db.databaseHistory.lines(after: 0).map { "\($0["op"]?.stringValue ?? "")/\($0["zoneName"]?.stringValue ?? "")/\($0["zoneSeq"].map(JSONWriter.compact) ?? "-")" }
    }

    func testAnIntentWhoseEntryACrashLeftUnindexedIsRecordedOnce() throws {
        let t = TempStore()
        let db = try t.db()
        try t.client().createZone("A")
        _ = try db.modify(zone: "A", operations: [op(.create, "a1")])
        let z = try db.zone("A")
        // The next commit's intent, its zone entries and its database entry all synced, then the
        // crash: the database entry's index word never written, the intent still there.
        let after = try db.databaseHistory.head()
        _ = try db.modify(zone: "A", operations: [op(.create, "a2")])
        try unindexLast(db.databaseHistory)
        let intent = DatabaseIntent(op: .change, zoneName: "A", incarnation: z.incarnation, zoneSeq: try z.history.head(), after: after)
        try db.journal.writeIntent(intent)
        XCTAssertEqual(try databaseEntries(db), ["create/A/-", "change/A/1"], "readers go by the index")

        try db.journal.withDatabaseLock(holdingZone: nil) {}
        XCTAssertEqual(try databaseEntries(db), ["create/A/-", "change/A/1", "change/A/2"], "recorded once, from the log")
        XCTAssertFalse(try FileSystem.exists(db.journal.intentFile("A")))
    }

    func testAZoneCommitACrashLeftUnindexedCountsForItsIntent() throws {
        let t = TempStore()
        let db = try t.db()
        try t.client().createZone("A")
        let z = try db.zone("A")
        let after = try db.databaseHistory.head()
        // The zone's commit synced, its index word not written, no database entry yet.
        _ = try db.modify(zone: "A", operations: [op(.create, "a1")])
        try unindexLast(db.databaseHistory)
        try unindexLast(z.history)
        let intent = DatabaseIntent(op: .change, zoneName: "A", incarnation: z.incarnation, zoneSeq: 1, after: after)
        try db.journal.writeIntent(intent)

        try db.journal.withDatabaseLock(holdingZone: nil) {}
        XCTAssertEqual(try z.history.head(), 1, "the zone's commit is indexed")
        XCTAssertEqual(try databaseEntries(db), ["create/A/-", "change/A/1"], "and announced")
    }

    func testTheNextCommitNumbersItsEntriesAfterACommitACrashLeftUnindexed() throws {
        let t = TempStore()
        let db = try t.db()
        try t.client().createZone("A")
        _ = try db.modify(zone: "A", operations: [op(.create, "a1"), op(.create, "a2")])
        let z = try db.zone("A")
        try unindexLast(z.history, 2)
        _ = try db.modify(zone: "A", operations: [op(.create, "a3")])
        XCTAssertEqual(try z.history.lines(after: 0).map { "\($0["seq"]?.int64Value ?? 0):\($0["recordName"]?.stringValue ?? "")" },
                       ["1:a1", "2:a2", "3:a3"])
        XCTAssertEqual(try z.history.commitBounds(of: 1).after, 2, "a1 and a2 stay one commit")
    }

    /// After a crash between the log's sync and the index words (or a machine that stopped
    /// before they reached the disk) the first reader indexes the commit, if no writer holds the
    /// lock — a client may have been answered — and, while one does, leaves it to that writer.
    func testAReaderIndexesACommitACrashLeftUnindexedUnlessAWriterHoldsTheLock() throws {
        let t = TempStore()
        let db = try t.db()
        try t.client().createZone("A")
        _ = try db.modify(zone: "A", operations: [op(.create, "a1")])
        _ = try db.modify(zone: "A", operations: [op(.create, "a2")])
        let z = try db.zone("A")
        try unindexLast(z.history)
        let writer = try FileLock(path: db.journal.zoneLockFile("A"))
        XCTAssertEqual(try z.history.head(), 1, "a writer holds the lock: its commit may be in flight")
        XCTAssertEqual(try FileSystem.size(z.history.indexFile), 8)
        writer.unlock()
        XCTAssertEqual(try z.history.head(), 2, "no writer: the crash's commit is indexed")
        XCTAssertEqual(try FileSystem.size(z.history.indexFile), 16)
        XCTAssertEqual(try z.snapshot().record(named: "a2")?.recordName, "a2")
        // The database history the same way.
        try unindexLast(db.databaseHistory)
        let before = try db.databaseHistory.lines(after: 0).count
        XCTAssertEqual(try db.databaseHistory.head(), Int64(before + 1))
    }

    /// An append finishes a compaction's switch it finds under way — a `ck gc` killed after
    /// writing its marker — even in a server that trusts the write counters and knew the marker
    /// absent, when the kill came before the write was counted: the append must never go to
    /// the log the switch is about to replace.
    func testAnAppendFinishesACompactionSwitchNoWriteCounterSaw() throws {
        let dir = NSTemporaryDirectory() + "ck-gc-switch-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        StampedFiles.shared.trustWriteCounter(under: dir)
        let h = ChangeHistory(directory: dir)
        for i in 1...3 { try h.append([["seq": .int(Int64(i))]]) }
        let marker = dir + "/" + HistoryCompaction.markerName
        XCTAssertTrue(StampedFiles.shared.isAbsent(marker), "known absent, as a server would know it")
        // The switch under way, written by hand (uncounted): the new files beside the old, and the marker.
        try FileManager.default.copyItem(atPath: h.logFile, toPath: dir + "/" + HistoryCompaction.newLog)
        try FileManager.default.copyItem(atPath: h.indexFile, toPath: dir + "/" + HistoryCompaction.newIndex)
        FileManager.default.createFile(atPath: marker, contents: Data(#"{"retainedFrom":1,"schemaVersion":1}"#.utf8))
        try h.append([["seq": 4]])
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the switch was finished first")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/" + HistoryCompaction.newLog))
        XCTAssertEqual(try h.head(), 4)
        XCTAssertEqual(try h.lines(after: 0).map { $0["seq"]?.int64Value }, [1, 2, 3, 4])
    }

}

extension HistoryRecoveryTests {
    /// What the disk operations of `body` are, in order.
    private func operations(_ body: () throws -> Void) rethrows -> [String] {
        var ops: [String] = []
        CrashPoints.trace = { _, what in ops.append(what) }
        defer { CrashPoints.reset() }
        try body()
        return ops
    }

    /// A zone's creation, deletion or purge syncs its intent before the change it stands for:
    /// a power loss that kept the new `zone.json`, or the zone's move into the trash, must keep
    /// the intent too, or the database history would never announce the change. A write has
    /// none: its database entry is synced before the zone's entries.
    func testAnIntentIsSyncedBeforeTheZoneChangeItStandsFor() throws {
        let t = TempStore()
        let client = try t.client()
        _ = try t.db()
        func check(_ ops: [String], change: (String) -> Bool, _ what: String) throws {
            let intentSynced = try XCTUnwrap(ops.firstIndex { $0.hasPrefix("fsync ") && $0.contains("/intents/.tmp-") }, "\(what): no intent synced in \(ops)")
            let made = try XCTUnwrap(ops.firstIndex(where: change), "\(what): \(ops)")
            XCTAssertLessThan(intentSynced, made, "\(what): the intent is synced after the change it stands for")
        }
        try check(try operations { try client.createZone("A") }, change: { $0.hasPrefix("link ") && $0.hasSuffix("/zones/A/zone.json") }, "creation")
        try check(try operations { try client.deleteZone("A") }, change: { $0.hasPrefix("rename ") && $0.hasSuffix("/zones/A") }, "deletion")
        try client.createZone("B")
        let db = try t.db()
        let write = try operations { _ = try db.modify(zone: "B", operations: [op(.create, "b1")]) }
        XCTAssertFalse(write.contains { $0.contains("/intents/") }, "a write writes no intent: \(write)")
        let dbSync = try XCTUnwrap(write.firstIndex { $0.hasPrefix("fsync ") && $0.hasSuffix("/history.log") && !$0.contains("/zones/") }, "\(write)")
        let zoneSync = try XCTUnwrap(write.firstIndex { $0.hasPrefix("fsync ") && $0.hasSuffix("/zones/B/history.log") }, "\(write)")
        XCTAssertLessThan(dbSync, zoneSync, "the database's entry is synced before the zone's")
        try check(try operations { try client.purgeZone("B") }, change: { $0.hasPrefix("rename ") && $0.hasSuffix("/zones/B") }, "purge")
    }
}
