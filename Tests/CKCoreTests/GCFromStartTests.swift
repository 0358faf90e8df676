import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// After `ck gc`, a fetch from the start always finishes, whatever gc dropped (issue 30, item
/// 1): its pages' tokens may point into the compacted range, and such a fetch reads on through
/// what the compaction kept instead of answering CHANGE_TOKEN_EXPIRED page after page.
final class GCFromStartTests: XCTestCase {
    /// The case: 10 records imported, two updated, `gc --keep K`, then pages of 3.
    private func compactedZone(keep: Int64) throws -> (TempStore, APIClient) {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (1...10).map { op(.create, "r\($0)", ["n": .int(Int64($0))]) })
        for name in ["r1", "r2"] { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, name, ["n": 100])]) }
        try db.compactHistory(zone: "Z", keep: keep)
        return (t, db)
    }

    private func fetchFromStart(_ db: APIClient, limit: Int, between: (Int) throws -> Void = { _ in }) throws -> FeedReplica {
        var replica = FeedReplica()
        try replica.catchUp(db, zone: "Z", limit: limit, between: { page in
            XCTAssertLessThan(page, 50, "a fetch from the start must finish")
            if page >= 50 { throw CloudKitError.internalError("looping") }
            try between(page)
        })
        return replica
    }

    func testAFetchFromTheStartAfterGCFinishesWithEveryRecord() throws {
        for keep: Int64 in [0, 1, 2, 5] {
            let (t, db) = try compactedZone(keep: keep)
            for limit in [1, 3, 200] {
                let replica = try fetchFromStart(t.client(caller(device: "ipad")), limit: limit)
                XCTAssertEqual(replica.records, try db.records(zone: "Z"), "keep \(keep), limit \(limit)")
                XCTAssertEqual(replica.returned.count, 10, "each record once (keep \(keep), limit \(limit))")
                XCTAssertEqual(replica.records["r1"]?.fields["n"]?.value, 100)
                if limit == 3 { XCTAssertEqual(replica.pages.count, 4) }
            }
        }
    }

    /// The first page's token, taken before gc, points into what gc then compacts; with no write
    /// in between, the fetch goes on to the end — gc dropped nothing it still needs.
    func testGCBetweenThePagesOfAFetchFromTheStartWithoutWritesDoesNotExpireIt() throws {
        for keep: Int64 in [0, 1] {
            let (t, db) = try compactedZone(keep: 12)
            let replica = try fetchFromStart(t.client(caller(device: "ipad")), limit: 3) { page in
                if page == 1 { try db.compactHistory(zone: "Z", keep: keep) }
            }
            XCTAssertEqual(replica.records, try db.records(zone: "Z"), "keep \(keep)")
        }
    }

    /// Writes, then gc past the point where the fetch began: its pages still read on — nothing
    /// gc dropped is one it needs (updates come again at their latest state) — and finish with
    /// the zone as it is.
    func testGCPastTheStartOfAFetchAfterUpdatesDoesNotExpireIt() throws {
        let (t, db) = try compactedZone(keep: 12)
        let replica = try fetchFromStart(t.client(caller(device: "ipad")), limit: 3) { page in
            guard page == 1 else { return }
            for v in 1...3 { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "r\(v)", ["n": .int(Int64(200 + v))])]) }
            _ = try db.modify(zone: "Z", operations: [op(.create, "late", ["n": 1])])
            try db.compactHistory(zone: "Z")
        }
        XCTAssertEqual(replica.records, try db.records(zone: "Z"))
        XCTAssertEqual(replica.records["r1"]?.fields["n"]?.value, 201)
        XCTAssertNotNil(replica.records["late"])
    }

    /// gc that dropped the deletion of a record the fetch already returned cannot tell the
    /// client: that page is CHANGE_TOKEN_EXPIRED (the client must refetch), and the refetch
    /// finishes without the record.
    func testGCThatDroppedADeletionTheFetchNeedsExpiresItAndTheRefetchFinishes() throws {
        let (t, db) = try compactedZone(keep: 12)
        let ipad = t.client(caller(device: "ipad"))
        let first = try ipad.zoneChanges(zone: "Z", since: nil, limit: 3)
        let got = changeNames(first)
        XCTAssertEqual(got.count, 3)
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, got[0])])
        try db.compactHistory(zone: "Z")
        XCTAssertThrowsError(try ipad.zoneChanges(zone: "Z", since: first.syncToken, limit: 3)) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired)
        }
        let again = try fetchFromStart(ipad, limit: 3)
        XCTAssertEqual(again.records, try db.records(zone: "Z"))
        XCTAssertNil(again.records[got[0]])
    }

    /// A history compacted by an earlier ck, which did not record its dropped deletions, may
    /// have dropped one anywhere: a fetch begun before that gc expires (and starts again).
    func testAnEarlierCksCompactionIsTakenAsHavingDroppedDeletions() throws {
        let (t, db) = try compactedZone(keep: 12)
        let ipad = t.client(caller(device: "ipad"))
        let first = try ipad.zoneChanges(zone: "Z", since: nil, limit: 3)
        _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "r9", ["n": 9])])
        let z = try t.zoneStore("Z")
        try db.compactHistory(zone: "Z")
        var meta = try XCTUnwrap(FileSystem.readJSON(z.history.metaFile)?.objectValue)
        XCTAssertEqual(meta["deletionsDroppedThrough"], 0, "no deletion was dropped")
        XCTAssertNoThrow(try ipad.zoneChanges(zone: "Z", since: first.syncToken, limit: 3))
        meta["deletionsDroppedThrough"] = nil
        try FileSystem.writeJSON(z.history.metaFile, .object(meta))
        XCTAssertThrowsError(try ipad.zoneChanges(zone: "Z", since: first.syncToken, limit: 3)) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired)
        }
        XCTAssertEqual(try fetchFromStart(ipad, limit: 3).records, try db.records(zone: "Z"))
    }

    /// A token from before gc that is no fetch from the start stays expired; starting again
    /// from the start then finishes.
    func testAnOrdinaryTokenFromBeforeGCExpiresAndTheRefetchFinishes() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (1...10).map { op(.create, "r\($0)", ["n": .int(Int64($0))]) })
        let old = try db.allZoneChanges(zone: "Z", since: nil).syncToken
        for name in ["r1", "r2", "r3"] { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, name, ["n": 100])]) }
        try db.compactHistory(zone: "Z")
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: old)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired) }
        XCTAssertEqual(try fetchFromStart(db, limit: 3).records, try db.records(zone: "Z"))
    }

    /// The database feed has no such flaw: gc compacts zone histories only, never the
    /// database's, so a fetch of database changes from the start after gc reaches every zone.
    func testDatabaseChangesFromTheStartAfterGCFinish() throws {
        let (t, db) = try compactedZone(keep: 0)
        defer { withExtendedLifetime(t) {} }
        try db.createZone("Y")
        var token: String?
        var zones: [String] = []
        for _ in 0..<10 {
            let page = try db.databaseChanges(since: token, limit: 1)
            zones += page.zones.map(\.zoneID.zoneName)
            token = page.syncToken
            if !page.moreComing { break }
        }
        XCTAssertEqual(zones, ["Z", "Y"])
    }
}
