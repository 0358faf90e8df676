import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Group commit: requests writing one zone at once share a commit, each keeping its own
/// results, atomicity and conflicts.
final class GroupCommitTests: XCTestCase {
    /// Requests that arrive while a group commits wait, and all of them form the next group.
    func testRequestsArrivingDuringACommitFormTheNextGroup() throws {
        let gc = GroupCommit()
        final class Sizes: @unchecked Sendable { var list: [Int] = []; let lock = NSLock() }
        let sizes = Sizes()
        let firstIn = DispatchSemaphore(value: 0)
        let key = "zone-" + UUID().uuidString
        @Sendable func commit(_ jobs: [GroupCommit.Job]) -> [Result<[OperationResult], Error>] {
            sizes.lock.lock(); sizes.list.append(jobs.count); let n = sizes.list.count; sizes.lock.unlock()
            if n == 1 {
                firstIn.signal()
                // Hold the first group until the seven others wait.
                while gc.waitingCount(key) < 7 { usleep(1000) }
            }
            return jobs.enumerated().map { i, _ in .success([.failed(CloudKitError(.notFound, "job \(i)"))]) }
        }
        let noop = { (z: ZoneStore, t: Transaction) throws -> (Transaction, [OperationResult]) in (t, []) }
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { XCTAssertEqual(try? gc.run(GroupCommit.Job(apply: noop), key: key, commitGroup: commit).count, 1) }
        firstIn.wait()
        for _ in 0..<7 {
            DispatchQueue.global().async(group: group) { XCTAssertEqual(try? gc.run(GroupCommit.Job(apply: noop), key: key, commitGroup: commit).count, 1) }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(sizes.list, [1, 7])
        XCTAssertEqual(gc.waitingCount(key), 0)
    }

    /// Many callers saving and updating one zone at once, in one process: every save lands
    /// once, gapless in the history; of two updates with the same tag exactly one wins.
    func testConcurrentRequestsKeepTheirOwnResultsAndConflicts() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        let api = api(t.root)
        let me = caller()
        _ = try api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: me)
        let base = try api.modifyRecords(ModifyRequest(operations: [op(.create, "shared", ["n": 0])], zoneName: "Lists"), as: me)
        let tag = try XCTUnwrap(base.results[0].record?.recordChangeTag)
        final class Outcomes: @unchecked Sendable { var updates: [OperationResult] = []; var failures: [String] = []; let lock = NSLock() }
        let out = Outcomes()
        let group = DispatchGroup()
        for w in 0..<8 {
            DispatchQueue.global().async(group: group) {
                let caller = caller(device: "d\(w)")
                for i in 0..<10 {
                    do {
                        let r = try api.modifyRecords(ModifyRequest(operations: [op(.create, "w\(w)-\(i)", ["n": .int(Int64(i))])], zoneName: "Lists"), as: caller)
                        if let e = r.results[0].error { out.lock.lock(); out.failures.append("\(e)"); out.lock.unlock() }
                    } catch { out.lock.lock(); out.failures.append("\(error)"); out.lock.unlock() }
                }
                // An atomic batch that fails (the second create exists) changes nothing of its own.
                _ = try? api.modifyRecords(ModifyRequest(operations: [op(.create, "atomic-\(w)"), op(.create, "w\(w)-0")], zoneName: "Lists"), as: caller)
                let u = try? api.modifyRecords(ModifyRequest(operations: [op(.update, "shared", tag: tag, ["n": .int(Int64(w))])], zoneName: "Lists"), as: caller)
                out.lock.lock(); if let r = u?.results.first { out.updates.append(r) }; out.lock.unlock()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(out.failures, [])
        XCTAssertEqual(out.updates.filter { $0.record != nil }.count, 1, "one update with the tag wins")
        XCTAssertEqual(out.updates.filter { $0.error?.code == .conflict }.count, 7)
        let z = try t.zoneStore("Lists")
        let expected = (0..<8).flatMap { w in (0..<10).map { "w\(w)-\($0)" } }
        let found = try api.lookupRecords(LookupRecordsRequest(recordNames: expected + (0..<8).map { "atomic-\($0)" }, zoneName: "Lists"), as: me)
        XCTAssertEqual(found.results.prefix(80).filter { $0.record != nil }.count, 80)
        XCTAssertEqual(found.results.suffix(8).filter { $0.error?.code == .notFound }.count, 8, "an atomic batch that failed wrote nothing")
        var seqs: [Int64] = []
        try z.history.forEachEntry(after: 0, through: try z.history.head()) { e in seqs.append(e.seq); return true }
        XCTAssertEqual(seqs, Array(1...Int64(seqs.count)), "gapless")
        XCTAssertEqual(seqs.count, 8 * 10 + 1 + 1)
    }

    /// A group of three requests, forced: a placeholder holds the zone's group until all three
    /// wait behind it, so the three are committed as one group. Each has its own outcome — an
    /// update that succeeds, an update with a stale tag (CONFLICT), a new record — and each
    /// caller must get its own, whatever order they arrived in.
    func testEveryRequestOfAForcedGroupGetsItsOwnResult() throws {
        let t = TempStore()
        let api = api(t.root)
        let me = caller()
        _ = try api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: me)
        let base = try api.modifyRecords(ModifyRequest(operations: [op(.create, "counter", ["n": 0]), op(.create, "other", ["n": 0])], zoneName: "Lists"), as: me)
        let tag = try XCTUnwrap(base.results[0].record?.recordChangeTag)
        let key = try t.zoneStore("Lists").directory

        // The placeholder leads a group of its own and holds it until three requests wait.
        let gc = GroupCommit.shared
        let holding = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? gc.run(GroupCommit.Job { _, tx in (tx, []) }, key: key) { jobs in
                holding.signal()
                let deadline = Date().addingTimeInterval(30)
                while gc.waitingCount(key) < 3 && Date() < deadline { usleep(1000) }
                return jobs.map { _ in .success([]) }
            }
            released.signal()
        }
        XCTAssertEqual(holding.wait(timeout: .now() + 30), .success)

        let requests: [(name: String, request: ModifyRequest)] = [
            ("update", ModifyRequest(operations: [op(.update, "counter", type: nil, tag: tag, ["n": 1])], zoneName: "Lists")),
            ("conflict", ModifyRequest(operations: [op(.update, "other", type: nil, tag: "zzz", ["n": 9])], zoneName: "Lists")),
            ("create", ModifyRequest(operations: [op(.create, "new-one", ["n": 3])], zoneName: "Lists")),
        ]
        final class Answers: @unchecked Sendable { var byRequest: [String: OperationResult] = [:]; let lock = NSLock() }
        let answers = Answers()
        let group = DispatchGroup()
        for (name, request) in requests {
            DispatchQueue.global().async(group: group) {
                let caller = caller(device: name)
                let r = try? api.modifyRecords(request, as: caller)
                answers.lock.lock(); answers.byRequest[name] = r?.results.first; answers.lock.unlock()
            }
        }
        XCTAssertEqual(released.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(gc.waitingCount(key), 0)

        let updated = answers.byRequest["update"]?.record
        XCTAssertEqual(updated?.recordName, "counter", "the update's caller gets the update's result")
        XCTAssertEqual(updated?.fields["n"]?.value, 1)
        XCTAssertNotEqual(updated?.recordChangeTag, tag)
        let conflict = answers.byRequest["conflict"]?.error
        XCTAssertEqual(conflict?.code, .conflict, "the stale tag's caller gets its CONFLICT")
        XCTAssertEqual(conflict?.recordName, "other")
        let created = answers.byRequest["create"]?.record
        XCTAssertEqual(created?.recordName, "new-one", "the create's caller gets the new record")
        XCTAssertEqual(created?.fields["n"]?.value, 3)
        XCTAssertEqual(created?.created.deviceID, "create", "written by that caller's device")
        // And the store agrees.
        let now = try api.lookupRecords(LookupRecordsRequest(recordNames: ["counter", "other", "new-one"], zoneName: "Lists"), as: me)
        XCTAssertEqual(now.results.map { $0.record?.fields["n"]?.value }, [1, 0, 3])
    }
    /// A group's database entry is synced beside its zone entries (the two syncs overlap); when
    /// the zone's commit fails — here the deletion's tombstone cannot be prepared — the database
    /// entry is taken back with it: no reader ever sees a database change without its commit.
    func testADatabaseEntrySyncedBesideAFailedZoneCommitIsTakenBack() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let db = try t.db()
        _ = try db.modify(zone: "A", operations: [op(.create, "victim")])
        let z = try db.zone("A")
        let (dbHead, zoneHead) = (try db.databaseHistory.head(), try z.history.head())
        // A file where the tombstone's shard directory must be: the deletion's files cannot be
        // prepared (nothing reads that directory before).
        try FileSystem.makeDirectories(z.directory + "/" + ZoneStore.deletedDirectoryName)
        let shard = z.directory + "/" + ZoneStore.deletedDirectoryName + "/" + PathEncoding.shard("victim")
        XCTAssertTrue(FileManager.default.createFile(atPath: shard, contents: Data("x".utf8)))
        XCTAssertThrowsError(try db.modify(zone: "A", operations: [op(.forceDelete, "victim", type: nil)]))
        XCTAssertEqual(try db.databaseHistory.head(), dbHead, "the database entry was taken back")
        XCTAssertEqual(try z.history.head(), zoneHead)
        XCTAssertFalse(try FileSystem.exists(db.journal.intentFile("A")))

        try FileManager.default.removeItem(atPath: shard)
        _ = try db.modify(zone: "A", operations: [op(.forceDelete, "victim", type: nil)])
        XCTAssertEqual(try db.databaseHistory.head(), dbHead + 1)
        XCTAssertEqual(try t.client().databaseChanges(since: nil).zones.count, 1)
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
    }
    /// What a crash between the two overlapped syncs may leave: the database's entry of a zone
    /// commit that was lost (never answered). It names a zone change with no record change: fsck
    /// leaves it, the zone's feed shows nothing new, and the zone's next commit is recorded after it.
    func testADatabaseEntryWhoseZoneCommitWasLostIsHarmless() throws {
        let t = TempStore()
        let c = t.client()
        try c.createZone("A")
        let db = try t.db()
        _ = try db.modify(zone: "A", operations: [op(.create, "a1")])
        let z = try db.zone("A")
        let zoneToken = try c.allZoneChanges(zone: "A", since: nil).syncToken
        let dbToken = try c.databaseChanges(since: nil).syncToken
        // The entry of zone commit 2, which the crash lost.
        try db.journal.withDatabaseLock(holdingZone: "A") {
            _ = try db.journal.appendDatabaseEntry(DatabaseIntent(op: .change, zoneName: "A", incarnation: z.incarnation, zoneSeq: try z.history.head() + 1))
        }
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
        XCTAssertEqual(try c.databaseChanges(since: dbToken).zones.map(\.zoneID.zoneName), ["A"])
        XCTAssertTrue(try c.allZoneChanges(zone: "A", since: zoneToken).changes.isEmpty)

        _ = try db.modify(zone: "A", operations: [op(.create, "a2")])
        XCTAssertEqual(try c.databaseChanges(since: dbToken).zones.map(\.zoneID.zoneName), ["A"])
        XCTAssertEqual(try c.allZoneChanges(zone: "A", since: zoneToken).changes.count, 1)
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
    }
}
