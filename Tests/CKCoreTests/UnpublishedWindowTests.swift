import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// A server answers a group's requests once its history is synced and publishes the derived
/// files after, while the next group commits (issue 38, UnpublishedCommits). In that window —
/// held open here by the publisher's test hook — readers, the server's next writers and other
/// processes must all see the zone as committed, and a publication that fails must be redone.
final class UnpublishedWindowTests: XCTestCase {
    /// The publisher waits at `gate` before each publication until the test lets it go.
    private let gate = DispatchSemaphore(value: 0)

    override func setUp() {
        let gate = self.gate
        UnpublishedCommits.willPublish = { gate.wait() }
    }

    override func tearDown() {
        UnpublishedCommits.willPublish = nil
        for _ in 0..<64 { gate.signal() }
        GroupCommit.shared.finishPublishing()
        CrashPoints.reset()
    }

    /// The private database as `ck serve` opens it: its groups publish after the answer.
    private func served(_ t: TempStore) throws -> Database {
        let store = CloudKitStore(root: t.root, clock: t.store.clock, publishesAfterAnswer: true)
        return try store.database(DatabaseAddress(container: "iCloud.com.example.test", environment: .development, scope: .private))
    }

    private func ref(_ name: String) -> JSONValue { ["recordName": .string(name), "action": "DELETE_SELF"] }

    /// Lets the publisher publish everything waiting, and waits for it.
    private func publishAll() {
        UnpublishedCommits.willPublish = nil
        for _ in 0..<64 { gate.signal() }
        GroupCommit.shared.finishPublishing()
    }

    func testAnAnsweredCommitIsReadBeforeItsFilesArePublishedAndTheZoneStaysLocked() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let db = try served(t)
        let saved = try XCTUnwrap(db.modify(zone: "A", operations: [op(.create, "a1", ["n": 1])]).first?.record)
        let z = try t.zoneStore("A")

        XCTAssertFalse(try FileSystem.exists(z.recordPath("a1")), "answered before its file is published")
        XCTAssertEqual(try z.appliedSeq(), 0)
        // Readers — the API's lookup, the zone's feed, a query — take it from the history.
        XCTAssertEqual(try t.client().lookup(zone: "A", recordNames: ["a1"]).first?.record?.recordChangeTag, saved.recordChangeTag)
        XCTAssertEqual(try t.client().allZoneChanges(zone: "A", since: nil).changes.compactMap { c -> String? in
            if case .record(let r) = c { return r.recordName }
            return nil
        }, ["a1"])
        XCTAssertEqual(try t.client().records(zone: "A").keys.sorted(), ["a1"])
        // Another process — a writer, ck fsck, a reset — waits for the zone until it is published.
        XCTAssertNil(try FileLock.attempt(db.journal.zoneLockFile("A")), "the zone's lock is kept while its files are unpublished")

        publishAll()
        XCTAssertTrue(try FileSystem.exists(z.recordPath("a1")))
        XCTAssertEqual(try z.appliedSeq(), try z.history.head())
        let free = try XCTUnwrap(FileLock.attempt(db.journal.zoneLockFile("A")), "let go once published")
        free.unlock()
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
    }

    func testTheNextGroupsWriteOverRecordsAndReferencesNotYetPublished() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let db = try served(t)
        let a1 = try XCTUnwrap(db.modify(zone: "A", operations: [op(.create, "a1", ["n": 1])]).first?.record)
        _ = try db.modify(zone: "A", operations: [op(.create, "list"), op(.create, "item", ["l": ref("list")])])
        XCTAssertFalse(try FileSystem.exists(t.zoneStore("A").recordPath("item")), "still unpublished")

        // An update with the unpublished tag succeeds; a create of an unpublished name is refused.
        let updated = try db.modify(zone: "A", operations: [op(.update, "a1", tag: a1.recordChangeTag, ["n": 2])])
        XCTAssertNotNil(updated.first?.record, "\(updated)")
        let again = try db.modify(zone: "A", operations: [op(.create, "a1", ["n": 3])])
        guard case .failed(let e)? = again.first else { return XCTFail("created over an unpublished record: \(again)") }
        XCTAssertEqual(e.code, .exists)
        // Deleting the unpublished list deletes its unpublished item: the reference index is read
        // from the unpublished commits too.
        let deleted = try db.modify(zone: "A", operations: [op(.forceDelete, "list", type: nil)])
        guard case .deleted(_, _, let cascaded)? = deleted.first else { return XCTFail("\(deleted)") }
        XCTAssertEqual(cascaded, ["item"])

        publishAll()
        XCTAssertEqual(try t.client().records(zone: "A").mapValues { $0.fields["n"]?.value }, ["a1": .int(2)])
        let z = try t.zoneStore("A")
        XCTAssertEqual(try z.appliedSeq(), try z.history.head())
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain, "the files published in commit order")
    }

    func testAServersCommitWritesNothingButItsHistoryBeforeTheAnswer() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let db = try served(t)
        _ = try db.modify(zone: "A", operations: [op(.create, "list"), op(.create, "item", ["l": ref("list")])])
        _ = try db.modify(zone: "A", operations: [op(.forceDelete, "list", type: nil)])
        let z = try t.zoneStore("A")
        // No record file, reference file or tombstone — not even a temporary one — until the
        // publisher writes them.
        let written = try FileManager.default.subpathsOfDirectory(atPath: z.directory)
            .filter { $0.hasPrefix("records/") || $0.hasPrefix("refs/") || $0.hasPrefix("\(ZoneStore.deletedDirectoryName)/") }
        XCTAssertEqual(written.filter { $0.hasSuffix(".json") || $0.contains(".tmp-") }, [], "files written on the commit path")
        XCTAssertEqual(try t.client().lookup(zone: "A", recordNames: ["list", "item"]).compactMap { $0.record?.recordName }, [],
                       "read from the history: both deleted")

        publishAll()
        XCTAssertFalse(try FileSystem.exists(z.recordPath("item")))
        XCTAssertEqual(try z.appliedSeq(), try z.history.head())
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
    }

    func testAnIntentWrittenAfterTheServerListedNoneIsFinishedByItsNextGroup() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let db = try served(t)
        UnpublishedCommits.willPublish = nil
        // Groups have listed `intents/` (empty), a server keeping the listing (StampedFiles).
        for i in 0..<3 {
            _ = try db.modify(zone: "A", operations: [op(.create, "a\(i)")])
            usleep(30_000)
        }
        // Another process's zone creation, stopped after its intent: a directory and no zone.json.
        let intent = DatabaseIntent(op: .create, zoneName: "B", incarnation: "x", after: try db.databaseHistory.head())
        try db.journal.writeIntent(intent)
        try FileManager.default.createDirectory(atPath: db.directory + "/zones/B", withIntermediateDirectories: true)
        _ = try db.modify(zone: "A", operations: [op(.create, "a3")])
        XCTAssertFalse(try FileSystem.exists(db.journal.intentFile("B")), "finished by the next group's database lock")
        XCTAssertFalse(try FileSystem.exists(db.directory + "/zones/B"), "the zone made part-way is no zone")
    }

    func testAZonesOwnIntentIsFinishedBeforeItIsWrittenEvenWhereNoCounterSawIt() throws {
        let t = TempStore()
        try t.client().createZone("A")
        try t.client().createZone("B")
        let db = try served(t)
        UnpublishedCommits.willPublish = nil
        // Groups list intents/ (empty), the server keeping the listing.
        _ = try db.modify(zone: "A", operations: [op(.create, "a0", ["n": 0])])
        for i in 1..<4 {
            usleep(30_000)
            GroupCommit.shared.finishPublishing()
            _ = try db.modify(zone: "A", operations: [op(.forceUpdate, "a0", ["n": .int(Int64(i))])])
        }
        GroupCommit.shared.finishPublishing()
        // Another process deleted B — its intent synced, B moved into the trash — and was killed
        // before its write counted: the server's listing of intents/ is still vouched for.
        let b = try t.zoneStore("B")
        let intent = DatabaseIntent(op: .delete, zoneName: "B", incarnation: b.incarnation, after: try db.databaseHistory.head())
        let tmp = db.directory + "/intents/.tmp-other"
        XCTAssertTrue(FileManager.default.createFile(atPath: tmp, contents: Data(JSONWriter.compact(intent.json).utf8)))
        XCTAssertEqual(rename(tmp, db.journal.intentFile("B")), 0)
        try db.journal.moveToTrash(b, as: intent.trashName)
        // B is made again at once: the deletion is finished (announced) first, not written over.
        _ = try ZoneLifecycle(db).create("B")
        var ops: [String] = []
        try db.databaseHistory.forEachDatabaseEntry(after: 0) { e in
            if e.zoneName == "B" { ops.append(e.op.rawValue) }
            return true
        }
        XCTAssertEqual(ops, ["create", "delete", "create"])
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
    }

    func testAPublicationThatFailsIsRedoneByTheNextGroup() throws {
        // The first publication meets a full disk at each of its operations in turn — its
        // temporary files, their renames, the cursor —, until one publishes whole.
        var failedAt: [Int] = []
        for n in 1...64 {
            let t = TempStore()
            try t.client().createZone("A")
            let db = try served(t)
            UnpublishedCommits.willPublish = { CrashPoints.noSpaceFromOperation = CrashPoints.operations + n }
            let saved = try db.modify(zone: "A", operations: [op(.create, "a1", ["n": 1]), op(.create, "b1", ["r": ref("a1")])])
            XCTAssertEqual(saved.compactMap { $0.record?.recordName }, ["a1", "b1"], "answered once the history is synced")
            GroupCommit.shared.finishPublishing()
            CrashPoints.reset()
            UnpublishedCommits.willPublish = nil
            let z = try t.zoneStore("A")
            guard try z.appliedSeq() == 0 else { break }
            failedAt.append(n)
            // Readers take the commit from the history meanwhile.
            XCTAssertEqual(try t.client().lookup(zone: "A", recordNames: ["a1", "b1"]).compactMap { $0.record?.recordName }, ["a1", "b1"])

            let next = try db.modify(zone: "A", operations: [op(.create, "a2", ["n": 2])])
            XCTAssertNotNil(next.first?.record, "\(next)")
            GroupCommit.shared.finishPublishing()
            XCTAssertEqual(try z.appliedSeq(), try z.history.head(), "redone from the history (full disk at operation \(n))")
            for name in ["a1", "b1", "a2"] { XCTAssertTrue(try FileSystem.exists(z.recordPath(name)), "\(name) at operation \(n)") }
            XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain, "at operation \(n)")
        }
        XCTAssertGreaterThanOrEqual(failedAt.count, 4, "a publication's files, renames and cursor: \(failedAt)")
        XCTAssertEqual(failedAt, Array(1...failedAt.count))
    }

    func testSharesMadeWhileEarlierOnesAreUnpublishedAreAllRegistered() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let served = APIClient(api: CloudKitAPI(dataDirectory: t.root, clock: t.store.clock, serverURL: "http://127.0.0.1:9"), caller: t.client().caller, keeps: t)
        try served.modify(zone: "A", operations: [op(.create, "r1"), op(.create, "r2")])
        let first = try served.createShare(zone: "A", record: "r1", participants: [])
        let second = try served.createShare(zone: "A", record: "r2", participants: [])
        XCTAssertFalse(try FileSystem.exists(t.zoneStore("A").recordPath(first.recordName)), "the first share is not published yet")
        // The second share's commit keeps the first in the zone's registry: it is committed.
        XCTAssertEqual(Set(try ShareRegistry(zone: t.zoneStore("A")).shareNames()), [first.recordName, second.recordName])

        publishAll()
        XCTAssertFalse(try t.api.fsck(FsckRequest()).problemsRemain)
    }

    func testAnIdleServerLetsTheZoneGoByItself() throws {
        let t = TempStore()
        try t.client().createZone("A")
        let db = try served(t)
        UnpublishedCommits.willPublish = nil
        _ = try db.modify(zone: "A", operations: [op(.create, "a1")])
        // No finishPublishing: the publisher's end lets the locks go once no group follows.
        let deadline = Date().addingTimeInterval(5)
        var free: FileLock?
        while free == nil, Date() < deadline {
            free = try FileLock.attempt(db.journal.zoneLockFile("A"))
            if free == nil { usleep(1_000) }
        }
        XCTAssertNotNil(free, "an idle server keeps a zone locked")
        free?.unlock()
        XCTAssertTrue(try FileSystem.exists(t.zoneStore("A").recordPath("a1")))
    }

    func testACommandPublishesBeforeItReturns() throws {
        let t = TempStore()
        try t.client().createZone("A")
        _ = try t.db().modify(zone: "A", operations: [op(.create, "a1")])
        let z = try t.zoneStore("A")
        XCTAssertTrue(try FileSystem.exists(z.recordPath("a1")), "a lone command's files are there when it returns")
        XCTAssertEqual(try z.appliedSeq(), 1)
        let free = try XCTUnwrap(FileLock.attempt(t.db().journal.zoneLockFile("A")))
        free.unlock()
    }
}
