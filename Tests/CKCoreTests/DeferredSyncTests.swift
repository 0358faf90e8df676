import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// Record files synced in batches (the applied cursor's `durable` and `boot`), and what a bulk
/// load knows of a zone it alone writes (BulkLoad).
final class DeferredSyncTests: XCTestCase {
    func testTheBootIsTheKernelsBootID() throws {
        guard let raw = FileManager.default.contents(atPath: "/proc/sys/kernel/random/boot_id") else { throw XCTSkip("no boot_id here") }
        XCTAssertEqual(BootSession.id, String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testACursorWrittenInAnotherBootIsTrustedOnlyAsFarAsItsFilesWereSynced() {
        XCTAssertEqual(ZoneStore.AppliedCursor(seq: 8, durable: 5, boot: BootSession.id).trusted, 8)
        XCTAssertEqual(ZoneStore.AppliedCursor(seq: 8, durable: 5, boot: "00000000-0000-4000-8000-000000000000").trusted, 5)
        // Written before cursors had a boot: after a sync.
        XCTAssertEqual(ZoneStore.AppliedCursor(seq: 8, durable: 8, boot: nil).trusted, 8)
    }

    func testCommitsSyncTheirFilesOnceEnoughEntriesAreUnsynced() throws {
        guard BootSession.id != nil else { throw XCTSkip("the boot cannot be told here: every commit syncs") }
        let saved = ZoneStore.unsyncedEntries
        ZoneStore.unsyncedEntries = 3
        defer { ZoneStore.unsyncedEntries = saved }
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        var seen: [(Int64, Int64)] = []
        for i in 0..<7 {
            _ = try db.modify(zone: "Z", operations: [op(.create, "r\(i)", ["n": .int(Int64(i))])])
            let c = try t.zoneStore("Z").appliedCursor()
            XCTAssertEqual(c.boot, BootSession.id)
            seen.append((c.seq, c.durable))
        }
        XCTAssertEqual(seen.map(\.0), [1, 2, 3, 4, 5, 6, 7])
        XCTAssertEqual(seen.map(\.1), [0, 0, 3, 3, 3, 6, 6], "synced at the third unsynced entry, then not until three more")
    }

    func testCompactingAHistorySyncsTheFilesFirst() throws {
        guard BootSession.id != nil else { throw XCTSkip("the boot cannot be told here: every commit syncs") }
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        for i in 0..<4 { _ = try db.modify(zone: "Z", operations: [op(.create, "r\(i)")]) }
        XCTAssertLessThan(try t.zoneStore("Z").appliedCursor().durable, 4)
        try db.compactHistory(zone: "Z", keep: 1)
        let c = try t.zoneStore("Z").appliedCursor()
        XCTAssertEqual([c.seq, c.durable], [4, 4], "a restart must not need entries the compaction dropped")
    }

    func testABulkLoadSyncsInTheBackgroundAndALaterCommitRecordsIt() throws {
        guard BootSession.id != nil else { throw XCTSkip("the boot cannot be told here: every commit syncs") }
        let saved = ZoneStore.unsyncedEntries
        ZoneStore.unsyncedEntries = 100
        defer { ZoneStore.unsyncedEntries = saved }
        let t = TempStore()
        let (db, bulk) = try loading(t)
        _ = try db.modify(zone: "Z", ModifyBatch(batch(0..<100), atomic: false, bulk: bulk)).results
        // The commit started a sync of entries 1…100 and went on; wait for it.
        let z = try db.zone("Z")
        for _ in 0..<1000 where BackgroundSyncs.shared.finished(z) != 100 { usleep(10_000) }
        XCTAssertEqual(BackgroundSyncs.shared.finished(z), 100)
        _ = try db.modify(zone: "Z", ModifyBatch(batch(100..<150), atomic: false, bulk: bulk)).results
        var c = try z.appliedCursor()
        XCTAssertEqual([c.seq, c.durable], [150, 100], "the next commit recorded what the finished sync covered")
        try db.finishBulkLoad(bulk)
        c = try z.appliedCursor()
        XCTAssertEqual([c.seq, c.durable], [150, 150])
    }

    // MARK: bulk loads

    /// The zone's index files, by path (the load's temporary spill files left out).
    private func indexFiles(_ z: ZoneStore) -> [String: Data] {
        var out: [String: Data] = [:]
        let root = z.directory + "/indexes"
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: root) else { return out }
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: root + "/" + rel, isDirectory: &isDir), !isDir.boolValue { out[rel] = fm.contents(atPath: root + "/" + rel) }
        }
        return out
    }

    /// The load's index against one made from the record files.
    private func assertIndexAsBuiltFromTheFiles(_ db: Database, file: StaticString = #filePath, line: UInt = #line) throws {
        let z = try db.zone("Z")
        let loaded = indexFiles(z)
        XCTAssertFalse(loaded.isEmpty, file: file, line: line)
        try FileManager.default.removeItem(atPath: z.directory + "/indexes")
        try ZoneIndex(zone: z).buildFromRecordFiles(schema: try db.schema(), head: try z.history.head())
        let built = indexFiles(z)
        XCTAssertEqual(loaded.keys.sorted(), built.keys.sorted(), file: file, line: line)
        for (k, v) in built where loaded[k] != v { XCTFail("\(k) differs from the index the record files give", file: file, line: line) }
    }

    /// Zone Z, empty, and a bulk load into it, by a database that leaves index upkeep to the
    /// load's end (as `ck import`'s does).
    private func loading(_ t: TempStore) throws -> (Database, BulkLoad) {
        let db = try t.db()
        db.defersIndexMaintenance = true
        _ = try ZoneLifecycle(db).create("Z")
        return (db, BulkLoad(zone: "Z"))
    }

    private func batch(_ range: Range<Int>, _ prefix: String = "r") -> [RecordOperation] {
        range.map { i in
            var o = op(.forceReplace, "\(prefix)\(i)", type: i % 3 == 0 ? "Other" : "Item", ["n": .int(Int64(i % 17)), "s": .string("v\(i * 7919 % 1000)")])
            o.skipIfUnchanged = true
            return o
        }
    }

    func testALoadIntoAnEmptyZoneWritesTheIndexTheRecordFilesGive() throws {
        let t = TempStore()
        let (db, bulk) = try loading(t)
        for b in 0..<4 { _ = try db.modify(zone: "Z", ModifyBatch(batch(b * 100..<(b + 1) * 100), atomic: false, bulk: bulk)).results }
        XCTAssertTrue(bulk.knowsZone)
        try db.finishBulkLoad(bulk)
        let c = try db.zone("Z").appliedCursor()
        XCTAssertEqual([c.seq, c.durable], [400, 400], "the load ends synced")
        try assertIndexAsBuiltFromTheFiles(db)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: try db.zone("Z").directory + "/indexes").filter { $0.hasPrefix(".") }, [], "no spill files left")
    }

    func testALoadForgetsTheZoneOnceAnotherWriterCommits() throws {
        let t = TempStore()
        let (db, bulk) = try loading(t)
        _ = try db.modify(zone: "Z", ModifyBatch(batch(0..<100), atomic: false, bulk: bulk)).results
        // Another process writes between two batches: a record the load never wrote, and one
        // of the load's records changed.
        let other = try t.db()
        // (It leaves the index alone, so that the end's index can be compared byte for byte
        // with one made from the files.)
        other.defersIndexMaintenance = true
        _ = try other.modify(zone: "Z", operations: [op(.forceReplace, "x", ["n": 99]), op(.forceReplace, "r150", type: "Other", ["n": 5])])
        let results = try db.modify(zone: "Z", ModifyBatch(batch(100..<200), atomic: false, bulk: bulk)).results
        XCTAssertFalse(bulk.knowsZone)
        // r150 existed when the second batch ran: read, and replaced (its entry names the
        // version before), not taken for a new record.
        let z = try db.zone("Z")
        let seq = ChangeTag.seq(ofTag: results[50].record!.recordChangeTag)!
        XCTAssertEqual(try z.history.entry(seq)?.prev, 102)
        try db.finishBulkLoad(bulk)
        // The index holds the other writer's record "x" too: made from the files.
        try assertIndexAsBuiltFromTheFiles(db)
    }

    func testALoadForgetsAZoneMadeAgainUpToTheSameHead() throws {
        let t = TempStore()
        let (db, bulk) = try loading(t)
        _ = try db.modify(zone: "Z", ModifyBatch(batch(0..<100), atomic: false, bulk: bulk)).results
        // Meanwhile the zone is deleted, made again, and given 100 records of its own: the
        // same head, another zone.
        let other = try t.db()
        try ZoneLifecycle(other).delete("Z")
        _ = try ZoneLifecycle(other).create("Z")
        _ = try other.modify(zone: "Z", operations: batch(100..<200), atomic: false)
        XCTAssertEqual(try db.zone("Z").history.head(), 100)
        // The load's next batch holds the same records: read, found unchanged, nothing written.
        _ = try db.modify(zone: "Z", ModifyBatch(batch(100..<200), atomic: false, bulk: bulk)).results
        XCTAssertFalse(bulk.knowsZone)
        XCTAssertEqual(try db.zone("Z").history.head(), 100)
    }

    func testARecordLoadedTwiceLeavesNoStaleIndexEntry() throws {
        let t = TempStore()
        let (db, bulk) = try loading(t)
        _ = try db.modify(zone: "Z", ModifyBatch(batch(0..<100), atomic: false, bulk: bulk)).results
        _ = try db.modify(zone: "Z", ModifyBatch([op(.forceReplace, "r1", ["n": 1000])], atomic: false, bulk: bulk)).results
        try db.finishBulkLoad(bulk)
        try assertIndexAsBuiltFromTheFiles(db)
    }
}
