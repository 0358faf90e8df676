import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The change feeds through changes/zone and changes/database: tokens, pages, tombstones, and
/// which zones have feeds.
final class ZoneChangesTests: XCTestCase {
    private func names(_ r: ZoneChangesResult) -> [String] {
        r.changes.map { if case .record(let rec) = $0 { return rec.recordName } else if case .deleted(let n) = $0 { return "-" + n }; return "" }
    }

    func testChangesSinceATokenAreTheLatestStateAndTombstones() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a"), op(.create, "b"), op(.create, "c")])
        let first = try db.zoneChanges(zone: "Z", since: nil)
        XCTAssertEqual(names(first), ["a", "b", "c"])
        XCTAssertFalse(first.moreComing)
        _ = try db.modify(zone: "Z", operations: [op(.forceUpdate, "a", ["n": 1]), op(.forceUpdate, "a", ["n": 2]), op(.forceDelete, "b")])
        let next = try db.zoneChanges(zone: "Z", since: first.syncToken)
        XCTAssertEqual(names(next), ["a", "-b"])
        if case .record(let a) = next.changes[0] { XCTAssertEqual(a.fields["n"]?.value, 2) } else { XCTFail() }
        // At the head: stable, no records, same token.
        let again = try db.zoneChanges(zone: "Z", since: next.syncToken)
        XCTAssertTrue(again.changes.isEmpty)
        XCTAssertEqual(again.syncToken, next.syncToken)
    }

    /// From scratch a deletion is reported only to the device that made the record (Apple
    /// DTS, reference §5.4): another device gets only the records that exist.
    func testFromTheStartOmitsRecordsThatNoLongerExistButOnTheirDevice() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a"), op(.create, "b")])
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "a")])
        XCTAssertEqual(names(try db.with(device: "other").zoneChanges(zone: "Z", since: nil)), ["b"])
        XCTAssertEqual(names(try db.zoneChanges(zone: "Z", since: nil)), ["b", "-a"])
    }

    func testPagesHoldAtMostTheLimitAndChainToTheEnd() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: (0..<7).map { op(.create, "r\($0)") })
        var token: String? = nil
        var seen: [String] = []
        var pages = 0
        repeat {
            let p = try db.zoneChanges(zone: "Z", since: token, limit: 3)
            XCTAssertLessThanOrEqual(p.changes.count, 3)
            seen += names(p)
            token = p.syncToken
            pages += 1
            if !p.moreComing { break }
        } while pages < 10
        XCTAssertEqual(seen, (0..<7).map { "r\($0)" })
        XCTAssertEqual(pages, 3)
    }

    func testForgedTruncatedForeignAndFutureTokensAreBadRequest() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        try db.createZone("Y")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a")])
        let tok = try db.zoneChanges(zone: "Z", since: nil).syncToken
        for bad in [String(tok.dropLast()), tok + "A", "ck1.e30.AAAAAAAAAAAAAAAAAAAAAA", "", "hello", tok.replacingOccurrences(of: "ck1.", with: "ck2.")] {
            XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: bad)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest, bad) }
        }
        XCTAssertThrowsError(try db.zoneChanges(zone: "Y", since: tok)) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest)
            XCTAssertTrue(($0 as? CloudKitError)?.reason.contains("zone 'Z'") ?? false)
        }
        XCTAssertThrowsError(try db.databaseChanges(since: tok)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        // Another user's zone of the same name.
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = t.client()
        try bob.createZone("Z")
        XCTAssertThrowsError(try bob.zoneChanges(zone: "Z", since: tok)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        // A token signed with a key this store never had.
        let alien = ChangeToken(kind: .zone, scopeKey: "x", seq: 1).encode(secret: Array(repeating: 7, count: 32))
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: alien)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
    }

    func testExpiryInvalidatesEarlierTokensButNotTheHead() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a")])
        let old = try db.zoneChanges(zone: "Z", since: nil).syncToken
        _ = try db.modify(zone: "Z", operations: [op(.create, "b")])
        let headBefore = try db.zoneChanges(zone: "Z", since: old).syncToken
        let head = try db.expireTokens(zone: "Z")
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: headBefore), "every token issued before the expiry expires") {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired)
        }
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: old)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired) }
        XCTAssertTrue(try db.zoneChanges(zone: "Z", since: head).changes.isEmpty)
        _ = try db.modify(zone: "Z", operations: [op(.create, "c")])
        XCTAssertEqual(names(try db.zoneChanges(zone: "Z", since: head)), ["c"])
        XCTAssertEqual(names(try db.zoneChanges(zone: "Z", since: nil)), ["a", "b", "c"])
    }

    func testAZoneDeletedAndCreatedAgainExpiresItsTokens() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a")])
        let tok = try db.zoneChanges(zone: "Z", since: nil).syncToken
        try db.deleteZone("Z")
        try db.createZone("Z")
        XCTAssertThrowsError(try db.zoneChanges(zone: "Z", since: tok)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .changeTokenExpired) }
    }

    func testChangeFeedsOnlyForCustomZonesOfPrivateAndShared() throws {
        let t = TempStore()
        XCTAssertThrowsError(try t.client().zoneChanges(zone: "_defaultZone", since: nil)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertThrowsError(try t.client(caller(.public)).zoneChanges(zone: "_defaultZone", since: nil)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertThrowsError(try t.client(caller(.public)).databaseChanges(since: nil)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertThrowsError(try t.client().zoneChanges(zone: "Nope", since: nil)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .zoneNotFound) }
    }

    func testDatabaseChangesListChangedAndDeletedZones() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("A")
        try db.createZone("B")
        let start = try db.databaseChanges(since: nil)
        XCTAssertEqual(start.zones.map(\.zoneID.zoneName), ["A", "B"])
        _ = try db.modify(zone: "B", operations: [op(.create, "x")])
        try db.deleteZone("A")
        _ = try db.modify(zone: "_defaultZone", operations: [op(.create, "d")])
        let next = try db.databaseChanges(since: start.syncToken)
        XCTAssertEqual(next.zones.map(\.zoneID.zoneName), ["B", "A"])
        XCTAssertEqual(next.zones.map(\.deleted), [false, true])
        XCTAssertTrue(try db.databaseChanges(since: next.syncToken).zones.isEmpty)
    }

    /// A device's bookmark is where its fetch without a token continues (ck's own: what an app
    /// keeps in UserDefaults); another device keeps its own.
    func testBookmarksAreKeptPerDevice() throws {
        let t = TempStore()
        let a = t.client(caller(device: "A")), b = t.client(caller(device: "B"))
        func fromBookmark(_ c: APIClient) throws -> [String] {
            guard case .page(let p, _) = try t.api.zoneChanges(ZoneChangesRequest(zones: [.init(zoneName: "Z")], fromBookmarks: true), as: c.caller).zones[0] else {
                XCTFail("zone Z fetched")
                return []
            }
            return changeNames(p)
        }
        // A bookmark lives in its zone's directory: none is kept for a zone that does not exist
        // (kept, "t0" would be a bad token to continue from).
        try t.api.saveBookmarks([BookmarkUpdate(zoneName: "Z", token: "t0")], as: a.caller)
        try a.createZone("Z")
        try a.modify(zone: "Z", operations: [op(.create, "r1")])
        XCTAssertEqual(try fromBookmark(a), ["r1"], "from the start")
        try t.api.saveBookmarks([BookmarkUpdate(zoneName: "Z", token: try a.zoneChanges(zone: "Z", since: nil).syncToken)], as: a.caller)
        try a.modify(zone: "Z", operations: [op(.create, "r2")])
        XCTAssertEqual(try fromBookmark(a), ["r2"], "from A's bookmark")
        XCTAssertEqual(try fromBookmark(b), ["r1", "r2"], "B has none")
        // The database's bookmark is another: none yet.
        XCTAssertEqual(try t.api.databaseChanges(DatabaseChangesRequest(fromBookmark: true), as: a.caller).result.zones.map(\.zoneID.zoneName), ["Z"])
    }

    /// Zone names at the byte limit, of any bytes, still make tokens the store accepts.
    func testTokensOfZonesWithLongNamesWork() throws {
        let t = TempStore()
        let db = t.client()
        for name in [String(repeating: "|", count: 255), String(repeating: "é", count: 127), String(repeating: "\u{1F600}", count: 63)] {
            try db.createZone(name)
            _ = try db.modify(zone: name, operations: [op(.create, "a")])
            let first = try db.zoneChanges(zone: name, since: nil)
            _ = try db.modify(zone: name, operations: [op(.create, "b")])
            XCTAssertEqual(names(try db.zoneChanges(zone: name, since: first.syncToken)), ["b"], "zone of \(name.utf8.count) bytes")
        }
    }

    /// Two records whose names differ only in Unicode normalization are two records, in one
    /// batch and in the change feed.
    func testNamesAreComparedByTheirBytes() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        let r = try db.modify(zone: "Z", operations: [op(.create, "caf\u{E9}", ["n": 1]), op(.create, "cafe\u{301}", ["n": 2])])
        XCTAssertEqual(r.compactMap { $0.error }.count, 0, "\(r.compactMap { $0.error })")
        let feed = try db.zoneChanges(zone: "Z", since: nil)
        XCTAssertEqual(feed.changes.count, 2)
        XCTAssertEqual(try db.lookup(zone: "Z", recordNames: ["caf\u{E9}"])[0].record?.fields["n"]?.value, 1)
        XCTAssertEqual(try db.lookup(zone: "Z", recordNames: ["cafe\u{301}"])[0].record?.fields["n"]?.value, 2)
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "cafe\u{301}")])
        XCTAssertEqual(names(try db.zoneChanges(zone: "Z", since: feed.syncToken)).map { Array($0.utf8) }, [Array("-cafe\u{301}".utf8)])
        XCTAssertNotNil(try db.lookup(zone: "Z", recordNames: ["caf\u{E9}"])[0].record)
    }
}
