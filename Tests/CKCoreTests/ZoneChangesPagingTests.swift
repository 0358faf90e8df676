import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Change feeds as CloudKit serves them, page by page (issue 28): each changed record once, at
/// its current state, on the page of its latest change; from scratch, a deletion only for the
/// device that created the record or when it happened during the fetch (reference §5.4).
final class ZoneChangesPagingTests: XCTestCase {
    /// 16 saves and one delete, on the phone: r0…r11 made, r1 updated three times, r5 once,
    /// r7 deleted.
    private func phoneWrites(_ t: TempStore) throws {
        let phone = t.client(caller(device: "phone"))
        try phone.createZone("Z")
        for i in 0..<12 { _ = try phone.modify(zone: "Z", operations: [op(.create, "r\(i)", ["n": .int(Int64(i))])]) }
        for v in 1...3 { _ = try phone.modify(zone: "Z", operations: [op(.forceUpdate, "r1", ["n": .int(Int64(100 + v))])]) }
        _ = try phone.modify(zone: "Z", operations: [op(.forceUpdate, "r5", ["n": 500])])
        _ = try phone.modify(zone: "Z", operations: [op(.forceDelete, "r7")])
    }

    func testFromScratchInPagesEachLiveRecordComesOnceAtItsCurrentState() throws {
        let t = TempStore()
        try phoneWrites(t)
        let ipad = t.client(caller(device: "ipad"))
        var replica = FeedReplica()
        let last = try replica.catchUp(ipad, zone: "Z", limit: 3)
        let live = try ipad.records(zone: "Z")
        XCTAssertEqual(live.count, 11)
        XCTAssertEqual(replica.returned.sorted(), live.keys.sorted(), "each live record once; the deletion is not the iPad's to hear of")
        XCTAssertEqual(replica.records, live, "every record at its current state: r1 as of its third update, not its first")
        XCTAssertEqual(replica.records["r1"]?.fields["n"]?.value, 103)
        XCTAssertTrue(replica.pages.allSatisfy { $0.count <= 3 })
        // The last page's token is the head's: stable.
        let again = try ipad.zoneChanges(zone: "Z", since: last.syncToken, limit: 3)
        XCTAssertTrue(again.changes.isEmpty)
        XCTAssertFalse(again.moreComing)
        XCTAssertEqual(again.syncToken, last.syncToken)
    }

    func testFromScratchTheDeviceThatCreatedARecordHearsOfItsDeletion() throws {
        let t = TempStore()
        try phoneWrites(t)
        var replica = FeedReplica()
        try replica.catchUp(t.client(caller(device: "phone")), zone: "Z", limit: 3)
        XCTAssertEqual(replica.returned.filter { $0.hasPrefix("-") }, ["-r7"])
        XCTAssertEqual(replica.returned.count, 12, "the 11 live records and the tombstone, each once")
        XCTAssertEqual(Set(replica.returned).count, 12)
        XCTAssertNil(replica.records["r7"])
    }

    func testFromScratchADeletionDuringTheFetchIsReported() throws {
        let t = TempStore()
        try phoneWrites(t)
        let ipad = t.client(caller(device: "ipad")), phone = t.client(caller(device: "phone"))
        var replica = FeedReplica()
        try replica.catchUp(ipad, zone: "Z", limit: 3) { page in
            // After the first page (r0, r2, r3: r1 changed later), the phone deletes r0 and r11.
            if page == 1 { _ = try phone.modify(zone: "Z", operations: [op(.forceDelete, "r0"), op(.forceDelete, "r11")]) }
        }
        XCTAssertEqual(replica.pages.first, ["r0", "r2", "r3"])
        XCTAssertEqual(replica.returned.filter { $0.hasPrefix("-") }, ["-r0", "-r11"], "deleted while the iPad paged: reported, once")
        XCTAssertFalse(replica.returned.contains("r11"), "r11's latest change is its deletion: never returned alive")
        XCTAssertEqual(replica.records, try ipad.records(zone: "Z"))
        // Once the fetch reached where it began, its tokens are ordinary: every deletion counts.
        _ = try phone.modify(zone: "Z", operations: [op(.create, "late")])
        _ = try phone.modify(zone: "Z", operations: [op(.forceDelete, "late")])
        XCTAssertEqual(changeNames(try ipad.zoneChanges(zone: "Z", since: replica.token)), ["-late"])
    }

    func testARecordChangedAgainWhileAClientPagesMovesToALaterPage() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (0..<9).map { op(.create, "r\($0)", ["n": 0]) })
        var replica = FeedReplica()
        try replica.catchUp(db, zone: "Z", limit: 3) { page in
            // After page 1 (r0, r1, r2): r1, already fetched, and r4, not yet, change.
            if page == 1 { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "r1", ["n": 1]), op(.forceUpdate, "r4", ["n": 4])]) }
        }
        XCTAssertEqual(replica.pages, [["r0", "r1", "r2"], ["r3", "r5", "r6"], ["r7", "r8", "r1"], ["r4"]],
                       "r4 comes once, on the page of its latest change; r1 again, in its new state")
        XCTAssertEqual(replica.records["r4"]?.fields["n"]?.value, 4)
        XCTAssertEqual(replica.records, try db.records(zone: "Z"))
    }

    /// `--all` in the core: every page in one result holds a record changed during the paging
    /// once, in its latest state, where it last changed; the database's likewise.
    func testAllPagesInOneResultHoldEachRecordOnce() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (0..<7).map { op(.create, "r\($0)", ["n": 0]) })
        var pages = 0
        let all = try db.allZoneChanges(zone: "Z", since: nil, limit: 3, while: {
            pages += 1
            if pages == 1 { _ = try? db.modify(zone: "Z", operations: [op(.forceUpdate, "r1", ["n": 1])]) }
            return true
        })
        XCTAssertEqual(changeNames(all), ["r0", "r2", "r3", "r4", "r5", "r6", "r1"])
        XCTAssertFalse(all.moreComing)
        if case .record(let r1) = all.changes.last { XCTAssertEqual(r1.fields["n"]?.value, 1) } else { XCTFail() }
        XCTAssertTrue(try db.zoneChanges(zone: "Z", since: all.syncToken).changes.isEmpty, "its token is the last page's")
        try db.createZone("Y")
        XCTAssertEqual(try db.allDatabaseChanges(since: nil, limit: 1).zones.map(\.zoneID.zoneName), ["Z", "Y"])
    }

    func testARecordMadeAndDeletedSinceTheTokenIsOneTombstone() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a")])
        let start = try db.zoneChanges(zone: "Z", since: nil)
        _ = try db.modify(zone: "Z", operations: [op(.create, "x", ["n": 1])])
        _ = try db.modify(zone: "Z", operations: [op(.create, "w")])
        _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "x", ["n": 2])])
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "x")])
        // Made, deleted and made again, then deleted again: still one tombstone.
        _ = try db.modify(zone: "Z", operations: [op(.create, "y"), op(.forceDelete, "y"), op(.create, "y"), op(.forceDelete, "y")])
        for limit in [1, 2, 200] {
            var replica = FeedReplica(token: start.syncToken)
            let last = try replica.catchUp(db, zone: "Z", limit: limit)
            XCTAssertEqual(replica.returned, ["w", "-x", "-y"], "limit \(limit): x and y never alive, whatever page their first change is on")
            XCTAssertNotEqual(last.syncToken, start.syncToken)
            let again = try db.zoneChanges(zone: "Z", since: last.syncToken, limit: limit)
            XCTAssertEqual(again.changes.count, 0)
            XCTAssertEqual(again.syncToken, last.syncToken, "a token at the head is stable")
        }
    }

    /// After `ck gc`, a fetch from scratch pages through what the compaction kept (its pages'
    /// tokens lie inside the compacted part, which only such a fetch may read on through);
    /// any other token from there is still expired.
    func testFromScratchPagesReadOnThroughACompactedHistory() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (0..<6).map { op(.create, "r\($0)", ["n": 0]) })
        let before = try db.zoneChanges(zone: "Z", since: nil, limit: 1).syncToken
        for v in 1...3 { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "r\(v)", ["n": .int(Int64(v))])]) }
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "r0")])
        try db.compactHistory(zone: "Z")
        var replica = FeedReplica()
        try replica.catchUp(t.client(caller(device: "other")), zone: "Z", limit: 1)
        XCTAssertEqual(replica.records, try db.records(zone: "Z"))
        XCTAssertEqual(replica.returned.count, 5)
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: before)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired) }
    }

    func testDatabaseChangesReturnEachZoneOnceAtItsLatestChange() throws {
        let t = TempStore()
        let db = t.client()
        for z in ["A", "B", "C"] { try db.createZone(z) }
        for z in ["A", "B", "A", "C", "A"] { _ = try db.modify(zone: z, operations: [op(.create, nil)]) }
        try db.deleteZone("B")
        var zones: [String] = []
        var token: String?
        var pages = 0
        repeat {
            let page = try db.databaseChanges(since: token, limit: 1)
            zones += page.zones.map { $0.zoneID.zoneName + ($0.deleted ? " deleted" : "") }
            token = page.syncToken
            pages += 1
            if !page.moreComing { break }
        } while pages < 20
        XCTAssertEqual(zones, ["C", "A", "B deleted"], "each zone once, in the order of its latest change")
        XCTAssertEqual(pages, 3)
        XCTAssertTrue(try db.databaseChanges(since: token).zones.isEmpty)
    }
}
