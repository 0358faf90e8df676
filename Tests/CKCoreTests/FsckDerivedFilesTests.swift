import Foundation
import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// fsck rebuilds the derived files a hand, a tool or a crash can spoil (issue 30, item 4):
/// a zone's share registry from the zone's share records, the applied cursor replaced by a
/// directory or a FIFO or ahead of the history, and a zone deletion of the earlier layout that
/// the database history never recorded. After a repair, a second run is clean.
final class FsckDerivedFilesTests: XCTestCase {
    private func assertSecondRunClean(_ api: CloudKitAPI, file: StaticString = #filePath, line: UInt = #line) throws {
        let again = try api.fsck(FsckRequest())
        XCTAssertEqual(again.report.problems.map(\.problem), [], "a second fsck is clean", file: file, line: line)
    }

    /// alice shares `groceries` (with its item `milk`) in her zone Lists with bob, who accepts.
    private func sharedWorld() throws -> (TempStore, CloudKitAPI, String) {
        let t = TempStore(signIn: false)
        for u in ["bob", "alice"] { try t.store.accounts.signIn(appleID: "\(u)@example.com", givenName: u.capitalized, familyName: nil, phone: nil) }
        let a = api(t.root)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller("alice"))
        var milk = op(.create, "milk", type: "Item", ["title": "milk"])
        milk.parent = "groceries"
        for o in [op(.create, "groceries", type: "List", ["title": "x"]), milk] {
            XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [o], zoneName: "Lists"), as: caller("alice")).results[0].error)
        }
        let share = try a.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "groceries", participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)]), as: caller("alice"))
        let guid = try XCTUnwrap(share.results.first?.value?["shortGUID"]?.stringValue)
        XCTAssertNil(try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: caller("bob")).failures.first)
        let registry = try XCTUnwrap(FileManager.default.enumerator(atPath: t.root)?.compactMap { $0 as? String }
            .first { $0.hasSuffix("/shares/" + PathEncoding.component("Lists") + ".json") })
        return (t, a, t.root + "/" + registry)
    }

    private func bobReadsMilk(_ a: CloudKitAPI) throws -> Bool {
        let r = try a.lookupRecords(LookupRecordsRequest(recordNames: ["milk"], zoneName: "Lists"), as: caller("bob", .shared))
        return r.results.first?.record != nil
    }

    func testAGarbledShareRegistryIsRebuiltFromTheZonesShareRecords() throws {
        let (t, a, registry) = try sharedWorld()
        let good = try XCTUnwrap(FileSystem.readJSON(registry))
        XCTAssertTrue(try bobReadsMilk(a))
        try FileSystem.writeAtomically(registry, Array("garbage".utf8))
        XCTAssertThrowsError(try bobReadsMilk(a), "the spoiled file breaks the participant's reads")

        let before = t.snapshot()
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.problemsRemain)
        XCTAssertTrue(dry.report.problems.contains { $0.path.hasSuffix("/shares/Lists.json") && !$0.repaired }, "\(dry.report.problems)")
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")

        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain, "\(fixed.report.problems)")
        XCTAssertEqual(try FileSystem.readJSON(registry), good, "rebuilt as the commits wrote it")
        XCTAssertTrue(try bobReadsMilk(a))
        try assertSecondRunClean(a)
    }

    func testAMissingOrIncompleteShareRegistryIsRebuilt() throws {
        let (t, a, registry) = try sharedWorld()
        defer { withExtendedLifetime(t) {} }
        let good = try XCTUnwrap(FileSystem.readJSON(registry))
        try FileSystem.remove(registry)
        XCTAssertThrowsError(try bobReadsMilk(a), "without the registry the shared zone cannot be found")
        XCTAssertFalse(try a.fsck(FsckRequest()).problemsRemain)
        XCTAssertEqual(try FileSystem.readJSON(registry), good)
        XCTAssertTrue(try bobReadsMilk(a))
        // A name that leads to no share (a share's deletion leaves its name) is allowed; a
        // registry that misses a share is rebuilt.
        var extra = good.objectValue!
        extra["shares"] = .array([.string("milk"), .string("gone")])
        try FileSystem.writeJSON(registry, .object(extra))
        XCTAssertThrowsError(try bobReadsMilk(a))
        let fixed = try a.fsck(FsckRequest())
        XCTAssertEqual(fixed.report.problems.map(\.problem), ["the share registry of zone 'Lists' misses share records of the zone (rebuilt from its 1 share record)"])
        XCTAssertEqual(try FileSystem.readJSON(registry), good)
        extra["shares"] = .array((good["shares"]?.arrayValue ?? []) + [.string("gone")])
        try FileSystem.writeJSON(registry, .object(extra))
        XCTAssertEqual(try a.fsck(FsckRequest()).report.problems.map(\.problem), [])
        try assertSecondRunClean(a)
    }

    private func zoneWithRecords() throws -> (TempStore, CloudKitAPI, ZoneStore) {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        for i in 0..<4 { _ = try db.modify(zone: "Z", operations: [op(.create, "r\(i)", ["n": .int(Int64(i))])]) }
        return (t, api(t.root), try t.zoneStore("Z"))
    }

    func testAnAppliedCursorReplacedByADirectoryIsRebuilt() throws {
        let (t, a, z) = try zoneWithRecords()
        try FileSystem.remove(z.appliedFile)
        try FileManager.default.createDirectory(atPath: z.appliedFile, withIntermediateDirectories: false)
        XCTAssertThrowsError(try t.client().modify(zone: "Z", operations: [op(.create, "blocked")]), "no commit can move the cursor")
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.report.problems.contains { $0.path.hasSuffix("/applied.json") && !$0.repaired }, "\(dry.report.problems)")
        XCTAssertTrue(try FileSystem.isDirectory(z.appliedFile), "a dry run changes nothing")
        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain, "\(fixed.report.problems)")
        XCTAssertEqual(try z.appliedSeq(), try z.history.head())
        XCTAssertNil(try t.client().modify(zone: "Z", operations: [op(.create, "after")])[0].error)
        XCTAssertEqual(try z.record(named: "r3")?.fields["n"]?.value, 3)
        try assertSecondRunClean(a)
    }

    func testAnAppliedCursorReplacedByAFIFOIsRebuilt() throws {
        let (t, a, z) = try zoneWithRecords()
        try FileSystem.remove(z.appliedFile)
        XCTAssertEqual(mkfifo(z.appliedFile, 0o600), 0)
        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain, "\(fixed.report.problems)")
        XCTAssertTrue(fixed.report.problems.contains { $0.path.hasSuffix("/applied.json") && $0.repaired }, "\(fixed.report.problems)")
        XCTAssertEqual(try z.appliedSeq(), try z.history.head())
        XCTAssertNil(try t.client().modify(zone: "Z", operations: [op(.create, "after")])[0].error)
        try assertSecondRunClean(a)
    }

    /// Each commit overwrites the cursor in place (issue 38: no file made and no inode freed
    /// per commit): the same file, one line of 160 bytes with its checksum.
    func testEachCommitOverwritesTheAppliedCursorInPlace() throws {
        let (t, _, z) = try zoneWithRecords()
        let inode = { () -> UInt64 in var st = stat(); XCTAssertEqual(lstat(z.appliedFile, &st), 0); return UInt64(st.st_ino) }
        let first = inode()
        _ = try t.client().modify(zone: "Z", operations: [op(.create, "r9")])
        XCTAssertEqual(inode(), first, "written in place, not replaced")
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: z.appliedFile))
        XCTAssertEqual(bytes.count, ZoneStore.AppliedCursor.fileLength)
        let j = try JSONParser.parse(Array(bytes))
        XCTAssertEqual(j["seq"]?.int64Value, 5)
        XCTAssertNotNil(j["check"]?.stringValue)
        XCTAssertEqual(try z.appliedCursor().seq, 5)
    }

    /// A cursor torn by a full disk or a power loss — here a digit changed under its checksum —
    /// is no cursor: readers take everything from the history (still right), fsck reports and
    /// rebuilds it, and an old cursor without a checksum (written whole, by rename) is taken.
    func testATornAppliedCursorIsNoCursorAndFsckRebuildsIt() throws {
        let (t, a, z) = try zoneWithRecords()
        var text = try XCTUnwrap(String(data: try XCTUnwrap(FileManager.default.contents(atPath: z.appliedFile)), encoding: .utf8))
        text = text.replacingOccurrences(of: "\"seq\":4", with: "\"seq\":3")
        try Data(text.utf8).write(to: URL(fileURLWithPath: z.appliedFile))
        XCTAssertEqual(try z.appliedCursor().seq, 0, "a checksum that does not match: nothing applied")
        XCTAssertEqual(try t.client().records(zone: "Z").count, 4, "readers still see every record")
        let before = t.snapshot()
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.report.problems.contains { $0.path.hasSuffix("zones/Z/applied.json") && $0.problem.contains("damaged") && !$0.repaired }, "\(dry.report.problems)")
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")
        XCTAssertFalse(try a.fsck(FsckRequest()).problemsRemain)
        XCTAssertEqual(try z.appliedCursor().seq, 4)
        try assertSecondRunClean(a)
        // The form before checksums: taken as it is; the next commit writes the new form.
        try FileSystem.writeJSON(z.appliedFile, ["schemaVersion": .int(FileFormat.schemaVersion), "seq": 4])
        XCTAssertEqual(try z.appliedCursor().seq, 4)
        _ = try t.client().modify(zone: "Z", operations: [op(.create, "r9")])
        XCTAssertEqual(FileManager.default.contents(atPath: z.appliedFile)?.count, ZoneStore.AppliedCursor.fileLength)
        XCTAssertEqual(try z.appliedCursor().seq, 5)
    }

    /// A cursor ahead of the history would make readers trust files for entries that do not
    /// exist, and hide a commit a crash left unapplied.
    func testAnAppliedCursorAheadOfTheHeadIsReportedByADryRunAndRepaired() throws {
        let (t, a, z) = try zoneWithRecords()
        XCTAssertEqual(try z.history.head(), 4)
        try FileSystem.writeJSON(z.appliedFile, ["schemaVersion": .int(FileFormat.schemaVersion), "seq": 100000])
        let before = t.snapshot()
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.problemsRemain)
        XCTAssertTrue(dry.report.problems.contains { $0.path.hasSuffix("zones/Z/applied.json") && $0.problem.contains("100000") && !$0.repaired }, "\(dry.report.problems)")
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")
        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain)
        XCTAssertEqual(try z.appliedCursor().seq, 4)
        try assertSecondRunClean(a)
    }

    /// A deletion of the earlier layout (`zones/.deleted-…`) that the database history never
    /// recorded: fsck finishes it and records it, so database-changes clients learn of it.
    func testAnUnrecordedLegacyDeletionIsRecordedInTheDatabaseHistory() throws {
        let (t, a, z) = try zoneWithRecords()
        let me = caller(.private, .appleID("alice@example.com"), device: "mac")
        let token = try a.databaseChanges(DatabaseChangesRequest(syncToken: nil), as: me).result.syncToken
        // The zone leaves zones/ as the earlier layout deleted zones, without a history entry.
        let zones = try t.directory() + "/zones/"
        try FileManager.default.moveItem(atPath: z.directory, toPath: zones + ".deleted-" + z.incarnation)
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.problemsRemain)
        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain, "\(fixed.report.problems)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: zones + ".deleted-" + z.incarnation))
        let changes = try a.databaseChanges(DatabaseChangesRequest(syncToken: token), as: me).result
        XCTAssertEqual(changes.zones.map { "\($0.zoneID.zoneName) deleted:\($0.deleted)" }, ["Z deleted:true"])
        try assertSecondRunClean(a)
    }

    /// The history index is derived from the log (a commit syncs the log only): a word a power
    /// loss lost in the middle (written back out of order) is found by readers as damage, and
    /// `ck fsck` makes the index again from the log; a dry run only says so.
    func testHistoryIndexWordsLostInTheMiddleAreMadeAgainFromTheLog() throws {
        let (t, a, z) = try zoneWithRecords()
        let good = try XCTUnwrap(FileSystem.read(z.history.indexFile))
        var holed = good
        for i in 8..<16 { holed[i] = 0 }
        try FileSystem.writeAtomically(z.history.indexFile, holed)
        XCTAssertThrowsError(try z.history.lines(after: 0), "a reader meets the hole")
        let before = t.snapshot()
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.report.problems.contains { $0.path.hasSuffix("/history.idx") && $0.problem.contains("made again from the log") && !$0.repaired },
                      "\(dry.report.problems)")
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")
        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain, "\(fixed.report.problems)")
        XCTAssertEqual(try FileSystem.read(z.history.indexFile), good, "the index the commits wrote")
        XCTAssertEqual(try z.history.lines(after: 0).map { $0["recordName"] }, ["r0", "r1", "r2", "r3"])
        try assertSecondRunClean(a)
    }

    /// A history whose log itself is damaged in the middle (a whole commit after a broken line)
    /// is not "repaired" by cutting the commits after the damage.
    func testALogDamagedInTheMiddleIsNotCutToMakeAnIndex() throws {
        // A line in the middle, and the last line of the last commit (which the index covers:
        // acknowledged), each spoiled by one bit.
        for last in [false, true] {
            let (t, a, z) = try zoneWithRecords()
            defer { withExtendedLifetime(t) {} }
            var log = try XCTUnwrap(FileSystem.read(z.history.logFile))
            let at = last ? log.count - 20 : try XCTUnwrap(log.firstIndex(of: 0x0A)) + 41
            log[at] ^= 0x01
            try FileSystem.writeAtomically(z.history.logFile, log)
            var idx = try XCTUnwrap(FileSystem.read(z.history.indexFile))
            for i in 8..<16 { idx[i] = 0 }
            try FileSystem.writeAtomically(z.history.indexFile, idx)
            let fixed = try a.fsck(FsckRequest())
            XCTAssertTrue(fixed.problemsRemain, "last line: \(last)")
            XCTAssertEqual(try FileSystem.read(z.history.logFile), log, "nothing acknowledged is cut (last line: \(last))")
        }
    }

    /// A crash after a commit's log was synced, before its index words: readers do not see the
    /// commit yet (it was never answered); the zone's next writer indexes it, and it is kept.
    func testACommitItsIndexNeverCoveredIsKeptByTheNextWriter() throws {
        let (t, a, z) = try zoneWithRecords()
        let idx = try XCTUnwrap(FileSystem.read(z.history.indexFile))
        try FileSystem.writeAtomically(z.history.indexFile, Array(idx.prefix(idx.count - 8)))
        let before = t.snapshot()
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.report.problems.contains { $0.problem.contains("1 committed entries its index does not cover yet") && !$0.repaired },
                      "\(dry.report.problems)")
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")
        XCTAssertNil(try t.client().modify(zone: "Z", operations: [op(.create, "next")])[0].error)
        XCTAssertEqual(try z.history.lines(after: 0).map { $0["recordName"] }, ["r0", "r1", "r2", "r3", "next"])
        XCTAssertEqual(try z.record(named: "r3")?.fields["n"]?.value, 3)
    }

    /// A compacted history (`ck gc` keeps lines but drops others, leaving empty slots, and the
    /// last commit a deletion whose entry it dropped) has its index made again exactly.
    func testTheIndexOfACompactedHistoryIsMadeAgainExactly() throws {
        let (t, a, z) = try zoneWithRecords()
        defer { withExtendedLifetime(t) {} }
        let db = try t.db()
        _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "r0", ["n": .int(9)])])
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "r3", type: nil)])
        let lock = try FileLock(path: db.journal.zoneLockFile("Z"))
        _ = try HistoryCompaction.compact(z.history, retainFrom: try z.history.head() + 1)
        lock.unlock()
        let good = try XCTUnwrap(FileSystem.read(z.history.indexFile))
        var holed = good
        for i in 8..<16 { holed[i] = 0 }
        try FileSystem.writeAtomically(z.history.indexFile, holed)
        XCTAssertTrue(try a.fsck(FsckRequest()).report.problems.contains { $0.problem.contains("made again from the log") })
        XCTAssertEqual(try FileSystem.read(z.history.indexFile), good)
        try assertSecondRunClean(a)
    }
}
