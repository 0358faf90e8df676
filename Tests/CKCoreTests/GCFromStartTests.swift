import XCTest
@testable import CKCore

/// After `ck gc`, a fetch from the start always finishes, whatever gc dropped (issue 30, item
/// 1): its pages' tokens may point into the compacted range, and such a fetch reads on through
/// what the compaction kept instead of answering CHANGE_TOKEN_EXPIRED page after page.
final class GCFromStartTests: XCTestCase {
    /// The case: 10 records imported, two updated, `gc --keep K`, then pages of 3.
    private func compactedZone(keep: Int64) throws -> (TempStore, Database) {
        let t = TempStore()
        let db = try t.db()
        _ = try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (1...10).map { op(.create, "r\($0)", ["n": .int(Int64($0))]) })
        for name in ["r1", "r2"] { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, name, ["n": 100])]) }
        _ = try db.compactHistory(zone: "Z") { _, head in head + 1 - keep }
        return (t, db)
    }

    private func fetchFromStart(_ db: Database, limit: Int, between: (Int) throws -> Void = { _ in }) throws -> FeedReplica {
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
                let replica = try fetchFromStart(try t.db(device: "ipad"), limit: limit)
                XCTAssertEqual(replica.records, try storedRecords(db, zone: "Z"), "keep \(keep), limit \(limit)")
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
            let replica = try fetchFromStart(try t.db(device: "ipad"), limit: 3) { page in
                if page == 1 { _ = try db.compactHistory(zone: "Z") { _, head in head + 1 - keep } }
            }
            XCTAssertEqual(replica.records, try storedRecords(db, zone: "Z"), "keep \(keep)")
        }
    }

    /// A token from before gc that is no fetch from the start stays expired; starting again
    /// from the start then finishes.
    func testAnOrdinaryTokenFromBeforeGCExpiresAndTheRefetchFinishes() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (1...10).map { op(.create, "r\($0)", ["n": .int(Int64($0))]) })
        let old = try db.allZoneChanges(zone: "Z", since: nil).syncToken
        for name in ["r1", "r2", "r3"] { _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, name, ["n": 100])]) }
        _ = try db.compactHistory(zone: "Z") { _, head in head + 1 }
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: old)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired) }
        XCTAssertEqual(try fetchFromStart(db, limit: 3).records, try storedRecords(db, zone: "Z"))
    }

    /// The database feed has no such flaw: gc compacts zone histories only, never the
    /// database's, so a fetch of database changes from the start after gc reaches every zone.
    func testDatabaseChangesFromTheStartAfterGCFinish() throws {
        let (t, db) = try compactedZone(keep: 0)
        defer { withExtendedLifetime(t) {} }
        _ = try db.createZone("Y")
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
