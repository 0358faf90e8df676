import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The change feeds of the API, in-process: Web Services bodies, per-zone failures, bookmarks.
final class APIChangesTests: XCTestCase {
    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func testZoneChangesBodiesAreReadStrictly() throws {
        let r = try ZoneChangesRequest(json: try body(#"{"zones":[{"zoneID":{"zoneName":"A"},"syncToken":"t","resultsLimit":2},{"zoneID":{"zoneName":"B"}}],"resultsLimit":5,"desiredKeys":["title"]}"#))
        XCTAssertEqual(r.zones.map(\.zoneName), ["A", "B"])
        XCTAssertEqual(r.zones.map(\.syncToken), ["t", nil])
        XCTAssertEqual(r.zones.map(\.resultsLimit), [2, 5], "a zone's own limit overrides the request's")
        XCTAssertEqual(r.zones[1].desiredKeys, ["title"])
        XCTAssertFalse(r.fromBookmarks, "a Web Services client keeps its own tokens")
        for (text, words) in [
            (#"{}"#, "non-empty 'zones' array"),
            (#"{"zones":[]}"#, "non-empty 'zones' array"),
            (#"{"zones":[{"syncToken":"t"}]}"#, "needs a 'zoneID'"),
            (#"{"zones":[{"zoneID":{"zoneName":"A"}},{"zoneID":{"zoneName":"A"}}]}"#, "more than once"),
            (#"{"zones":[{"zoneID":{"zoneName":"A"},"syncToken":5}]}"#, "syncToken must be a string"),
            (#"{"zones":[{"zoneID":{"zoneName":"A"},"resultsLimit":0}]}"#, "resultsLimit must be an integer"),
            (#"{"zones":[{"zoneID":{"zoneName":"A"}}],"token":"t"}"#, "unknown key 'token'"),
        ] {
            XCTAssertThrowsError(try ZoneChangesRequest(json: try body(text)), text) { e in
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \(e)")
            }
        }
        let d = try DatabaseChangesRequest(json: try body(#"{"syncToken":"t","resultsLimit":3}"#))
        XCTAssertEqual(d.syncToken, "t")
        XCTAssertEqual(d.resultsLimit, 3)
        XCTAssertThrowsError(try DatabaseChangesRequest(json: try body(#"{"zones":[]}"#)))
    }

    /// A zone that fails is an item of its own; the others are fetched. A device's bookmark is
    /// where a fetch without a token continues, and moves only when the front end says.
    func testPerZoneFailuresAndBookmarks() throws {
        let t = TempStore()
        let api = api(t.root)
        try t.client().createZone("A")
        let save = ModifyRequest(operations: [op(.create, "a1")], zoneName: "A")
        XCTAssertTrue(try api.modifyRecords(save, as: caller()).failures.isEmpty)
        let r = try api.zoneChanges(ZoneChangesRequest(zones: [.init(zoneName: "A"), .init(zoneName: "Nope"), .init(zoneName: "A", syncToken: "forged")]), as: caller())
        XCTAssertEqual(r.zones.count, 3)
        guard case .page(let p, _) = r.zones[0] else { return XCTFail("zone A fetched") }
        XCTAssertEqual(p.changes.count, 1)
        XCTAssertEqual(r.failures.map(\.code), [.zoneNotFound, .badRequest])
        XCTAssertEqual(r.jsonValue["zones"]?.arrayValue?[1]["zoneID"]?["zoneName"], "Nope", "a failed zone names itself")

        // Bookmarks: none yet, so from the start; saved; then the fetch continues there.
        let fromBookmark = ZoneChangesRequest(zones: [.init(zoneName: "A")], fromBookmarks: true)
        guard case .page(let first, _) = try api.zoneChanges(fromBookmark, as: caller()).zones[0] else { return XCTFail() }
        XCTAssertEqual(first.changes.count, 1)
        XCTAssertEqual(try api.zoneChanges(fromBookmark, as: caller()).jsonValue, try api.zoneChanges(fromBookmark, as: caller()).jsonValue, "nothing moves by itself")
        try api.saveBookmarks([BookmarkUpdate(zoneName: "A", token: first.syncToken)], as: caller())
        guard case .page(let next, _) = try api.zoneChanges(fromBookmark, as: caller()).zones[0] else { return XCTFail() }
        XCTAssertTrue(next.changes.isEmpty)
        XCTAssertEqual(next.syncToken, first.syncToken, "a token at the head is stable")
        // Another device keeps its own.
        let phone = caller(device: "phone")
        guard case .page(let theirs, _) = try api.zoneChanges(fromBookmark, as: phone).zones[0] else { return XCTFail() }
        XCTAssertEqual(theirs.changes.count, 1)
    }

    func testFeedsNeedAnAccountAndAFault() throws {
        let t = TempStore()
        let api = api(t.root)
        try t.client().createZone("A")
        _ = try FaultStore(root: t.root).add(Fault(op: .endpoint(.changesDatabase), code: .tryAgainLater, retryAfter: 2))
        XCTAssertThrowsError(try api.databaseChanges(DatabaseChangesRequest(), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .tryAgainLater) }
        XCTAssertNoThrow(try api.zoneChanges(ZoneChangesRequest(zones: [.init(zoneName: "A")]), as: caller()), "only changes/database is faulted")
        try FaultStore(root: t.root).clear()
        try t.store.accounts.signOut()
        XCTAssertThrowsError(try api.databaseChanges(DatabaseChangesRequest(), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired) }
    }
}
