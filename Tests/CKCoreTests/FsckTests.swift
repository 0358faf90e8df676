import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// fsck's mechanics: what a crash or a hand leaves in a zone's files (written here through
/// the zone's files), found and repaired; the records written and read through the API.
final class FsckTests: XCTestCase {
    private func zoneWith(_ n: Int) throws -> (TempStore, ZoneStore) {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (0..<n).map { op(.create, "r\($0)", ["n": .int(Int64($0))]) })
        return (t, try t.zoneStore("Z"))
    }

    func testACleanStoreHasNoProblems() throws {
        let (t, _) = try zoneWith(5)
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertTrue(r.problems.isEmpty, "\(r.problems.map(\.problem))")
        XCTAssertEqual(r.records, 5)
        XCTAssertEqual(r.historyEntries, 7, "5 in the zone, 2 in the database (zone created, zone written)")
    }

    func testRepairsWhatACrashLeaves() throws {
        let (t, z) = try zoneWith(4)
        // A torn record file, a missing one, a stale one, a deleted one that came back,
        // a temporary file, and an unacknowledged history tail.
        try FileSystem.writeAtomically(z.recordPath("r0"), Array("{\"schemaVers".utf8))
        try FileSystem.remove(z.recordPath("r1"))
        var stale = try z.record(named: "r2")!
        stale.recordChangeTag = "old"
        try FileSystem.writeJSON(z.recordPath("r2"), ["schemaVersion": 1, "record": stale.json()])
        _ = try t.client().modify(zone: "Z", operations: [op(.forceDelete, "r3")])
        let gone = try FileSystem.read(z.history.logFile)!
        var r3 = stale
        r3.recordName = "r3"
        try FileSystem.writeJSON(z.recordPath("r3"), ["schemaVersion": 1, "record": r3.json()])
        try FileSystem.writeAtomically(z.directory + "/.tmp-2147483646-x-1", [1, 2, 3])
        try FileSystem.append(z.history.logFile, Array("{\"seq\":99,".utf8))

        let dry = try Fsck.run(paths: t.store.paths, repair: false)
        XCTAssertEqual(dry.problems.count, 6, "\(dry.problems.map(\.problem))")
        XCTAssertFalse(dry.clean)
        XCTAssertEqual(try FileSystem.read(z.history.logFile)!.count, gone.count + 10, "a dry run repairs nothing")

        let fixed = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertEqual(fixed.problems.count, 6)
        XCTAssertTrue(fixed.clean)
        XCTAssertEqual(try z.record(named: "r0")?.fields["n"]?.value, 0)
        XCTAssertEqual(try z.record(named: "r1")?.fields["n"]?.value, 1)
        XCTAssertEqual(try z.record(named: "r2")?.recordChangeTag, "3")
        XCTAssertNil(try z.record(named: "r3"))
        XCTAssertEqual(try FileSystem.read(z.history.logFile)!, gone)
        XCTAssertFalse(try FileSystem.exists(z.directory + "/.tmp-2147483646-x-1"))
        XCTAssertTrue(try Fsck.run(paths: t.store.paths, repair: true).problems.isEmpty)
    }

    func testARecordWithoutHistoryIsAdopted() throws {
        let (t, z) = try zoneWith(1)
        var extra = try z.record(named: "r0")!
        extra.recordName = "handmade"
        try FileSystem.makeDirectories(String(z.recordPath("handmade").dropLast(("/" + PathEncoding.component("handmade") + ".json").count)))
        try FileSystem.writeJSON(z.recordPath("handmade"), ["schemaVersion": 1, "record": extra.json()])
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertEqual(r.problems.map(\.problem), ["record 'handmade' has no history entry (adopted)"])
        XCTAssertEqual(try z.history.head(), 2)
        let changes = try t.client().zoneChanges(zone: "Z", since: nil)
        XCTAssertEqual(changes.changes.count, 2, "an adopted record shows in the change feed")
        // It replaced no version of its own: the tag its file carried was r0's.
        XCTAssertNil(try z.history.entry(2)?.prev)
        XCTAssertEqual(try t.db().recordCounts(in: z), ["Item": 2])
    }

    func testATornIndexIsCutBack() throws {
        let (t, z) = try zoneWith(2)
        try FileSystem.append(z.history.indexFile, [0, 0, 0])
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertEqual(r.problems.count, 1, "\(r.problems.map(\.problem))")
        XCTAssertEqual(try FileSystem.size(z.history.indexFile), 16)
    }

    /// The reference index is derived: lost or wrong, fsck rebuilds it from the records, and
    /// DELETE_SELF cascades and VALIDATE blocks again.
    func testTheReferenceIndexIsRebuiltFromTheRecords() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        let ref: (String, String) -> JSONValue = { ["recordName": .string($0), "action": .string($1)] }
        _ = try db.modify(zone: "Z", operations: [op(.create, "list"), op(.create, "item", ["l": ref("list", "DELETE_SELF")]),
                                                  op(.create, "guarded"), op(.create, "guard", ["g": ref("guarded", "VALIDATE")])])
        let z = try t.zoneStore("Z")
        try FileSystem.removeTree(z.refsDirectory)
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertEqual(r.problems.filter { $0.problem.contains("reference index") }.count, 2, "\(r.problems.map(\.problem))")
        XCTAssertTrue(try Fsck.run(paths: t.store.paths, repair: false).problems.isEmpty)
        XCTAssertEqual(try db.modify(zone: "Z", operations: [op(.forceDelete, "guarded")])[0].error?.code, .validatingReferenceError)
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "list")])
        XCTAssertEqual(try db.lookup(zone: "Z", recordNames: ["item"])[0].error?.code, .notFound, "the cascade works again")
    }

    /// Tombstones are derived from the history: the commit that deletes a name writes its
    /// tombstone, the replay of an interrupted commit does too, and fsck rebuilds them when
    /// lost, damaged or stale (a dry run only reports).
    func testTombstonesAreWrittenWithDeletionsAndRebuiltByFsck() throws {
        let (t, z) = try zoneWith(3)
        let db = t.client()
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "r0")])
        _ = try db.modify(zone: "Z", operations: [op(.create, "r0")])
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "r0"), op(.forceDelete, "r1")])
        XCTAssertEqual(z.latestDeletion(of: "r0"), 6, "a name deleted again: its latest deletion")
        XCTAssertEqual(z.latestDeletion(of: "r1"), 7)
        XCTAssertNil(z.latestDeletion(of: "r2"))
        // Entry 8 committed, then the writer died: the next writer's replay writes its tombstone.
        let r2 = try z.record(named: "r2")!
        try z.history.append([HistoryEntry(seq: 8, timestamp: 1, op: .delete, recordName: "r2", userRecordName: "x", deviceID: "d",
                                           record: nil, prev: ChangeTag.seq(ofTag: r2.recordChangeTag))])
        _ = try db.modify(zone: "Z", operations: [op(.create, "r3")])
        XCTAssertEqual(z.latestDeletion(of: "r2"), 8)

        try FileSystem.remove(z.tombstonePath("r0"))
        try FileSystem.writeAtomically(z.tombstonePath("r1"), Array("{\"rec".utf8))
        try FileSystem.writeJSON(z.tombstonePath("r2"), ZoneStore.tombstoneJSON(recordName: "r2", seq: 3))
        try FileSystem.writeAtomically(z.tombstonePath("r3"), Array("{".utf8))
        let before = t.snapshot()
        let dry = try Fsck.run(paths: t.store.paths, repair: false)
        XCTAssertEqual(dry.problems.filter { $0.path.contains("/deleted/") }.count, 4, "\(dry.problems)")
        XCTAssertEqual(dry.problems.count, 4, "\(dry.problems)")
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")
        let fixed = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertEqual(fixed.problems.filter(\.repaired).count, 4, "\(fixed.problems)")
        XCTAssertEqual([z.latestDeletion(of: "r0"), z.latestDeletion(of: "r1"), z.latestDeletion(of: "r2")], [6, 7, 8])
        XCTAssertFalse(try FileSystem.exists(z.tombstonePath("r3")), "a damaged tombstone of a name never deleted is removed")
        XCTAssertTrue(try Fsck.run(paths: t.store.paths, repair: false).problems.isEmpty)
    }

    /// A commit interrupted after its point of no return (history written, files not) is
    /// finished by the next writer, before its own commit.
    func testTheNextWriterFinishesAnInterruptedCommit() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a", ["n": 1])])
        let z = try t.zoneStore("Z")
        // As if the process died after the history append: a later entry with no file yet.
        let rec = try z.record(named: "a")!
        var newer = rec
        newer.recordChangeTag = ChangeTag.tag(for: 2)
        newer.fields["n"] = field(2)
        try z.history.append([["seq": 2, "op": "save", "recordName": "a", "record": newer.json(), "recordChangeTag": .string(newer.recordChangeTag),
                               "prev": 1, "timestamp": 1, "userRecordName": "x", "deviceID": "d"]])
        XCTAssertEqual(try z.readRecord(named: "a")?.fields["n"]?.value, 1, "the file is behind")
        XCTAssertEqual(try z.record(named: "a")?.fields["n"]?.value, 2, "readers take entry 2 from the history")
        _ = try db.modify(zone: "Z", operations: [op(.create, "b")])
        XCTAssertEqual(try z.readRecord(named: "a")?.fields["n"]?.value, 2, "the next writer applied entry 2 to the file")
        XCTAssertEqual(try z.record(named: "b")?.recordChangeTag, ChangeTag.tag(for: 3))
        XCTAssertEqual(try z.appliedSeq(), 3)
    }

    /// A history fsck cannot read whole is reported, and nothing derived from it is "restored":
    /// no acknowledged record goes back to an older version, none is adopted again.
    func testADamagedHistoryNeverRollsRecordsBack() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "r1", ["v": 1])])
        _ = try db.modify(zone: "Z", operations: [op(.create, "r2")])
        _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "r1", ["v": 3])])
        let z = try t.zoneStore("Z")
        var log = String(decoding: try FileSystem.read(z.history.logFile)!, as: UTF8.self)
        log = log.replacingOccurrences(of: "\"seq\":2,", with: "\"seq\":7,")
        try FileSystem.writeAtomically(z.history.logFile, Array(log.utf8))
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertFalse(r.clean)
        XCTAssertTrue(r.problems.contains { $0.problem.contains("damaged") && !$0.repaired }, "\(r.problems.map(\.problem))")
        XCTAssertEqual(try z.record(named: "r1")?.fields["v"]?.value, 3, "r1 keeps its acknowledged version")
        XCTAssertEqual(try z.record(named: "r1")?.recordChangeTag, ChangeTag.tag(for: 3))
    }

    /// A log shorter than its index says is damage fsck cannot repair, and says so.
    func testALogShorterThanItsIndexIsReportedNotRepaired() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a", ["v": 1])])
        _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "a", ["v": 2])])
        let z = try t.zoneStore("Z")
        let log = try FileSystem.read(z.history.logFile)!
        try FileSystem.truncate(z.history.logFile, to: Int64(log.count / 2))
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        let shorter = r.problems.filter { $0.problem.contains("is shorter (") }
        XCTAssertEqual(shorter.count, 1)
        XCTAssertFalse(shorter[0].repaired)
        XCTAssertEqual(try z.record(named: "a")?.fields["v"]?.value, 2, "the record file is left as it is")
    }

    /// A reset marker outside development is not ck's: it is never honoured (production
    /// writes go on, development keeps its data) and fsck removes it.
    func testAResetMarkerInProductionIsIgnoredAndRemoved() throws {
        let t = TempStore()
        let dev = t.client()
        _ = try dev.modify(zone: "_defaultZone", operations: [op(.create, "keep")])
        _ = try t.api.deploySchema(as: caller())
        let marker = t.store.paths.environment("iCloud.com.example.test", .production) + "/reset.json"
        try FileSystem.writeJSON(marker, ["reset": "development"])
        let prod = t.client(caller(env: .production))
        XCTAssertNil(try prod.modify(zone: "_defaultZone", operations: [op(.create, "p")])[0].error)
        XCTAssertNotNil(try dev.lookup(zone: "_defaultZone", recordNames: ["keep"])[0].record)
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertEqual(r.problems.filter { $0.problem.contains("never reset") }.count, 1)
        XCTAssertFalse(try FileSystem.exists(marker))
    }
}
