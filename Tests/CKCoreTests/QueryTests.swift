import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

final class QueryTests: XCTestCase {
    func seeded() throws -> APIClient {
        let db = TempStore().client()
        let rows: [(String, [String: JSONValue])] = [
            ("a", ["title": "Apples", "priority": 3, "tags": ["red", "fruit"], "note": "The quick brown Fox"]),
            ("b", ["title": "bananas", "priority": 5, "tags": ["yellow", "fruit"], "place": ["latitude": 37.33, "longitude": -122.03]]),
            ("c", ["title": "Carrots", "priority": 1, "tags": ["orange"], "place": ["latitude": 48.85, "longitude": 2.35]]),
        ]
        _ = try db.modify(zone: "_defaultZone", operations: rows.map { op(.create, $0.0, $0.1) } + [op(.create, "other", type: "Else", ["priority": 9])])
        // Queries without a filter, and filters on recordName, need the index CloudKit needs.
        try db.addIndexes("Item")
        return db
    }

    func names(_ db: APIClient, _ filters: [QueryFilter], sorts: [QuerySort] = []) throws -> [String] {
        try db.query(QueryRequest(recordType: "Item", filters: filters, sorts: sorts)).records.map(\.recordName)
    }

    func f(_ name: String, _ c: QueryComparator, _ v: JSONValue, distance: Double? = nil) -> QueryFilter {
        QueryFilter(fieldName: name, comparator: c, value: field(v)!, distance: distance)
    }

    func testComparators() throws {
        let db = try seeded()
        XCTAssertEqual(try names(db, [f("priority", .greaterThan, 2)]), ["a", "b"])
        XCTAssertEqual(try names(db, [f("priority", .lessThanOrEquals, 3)]), ["a", "c"])
        XCTAssertEqual(try names(db, [f("title", .equals, "APPLES")]), ["a"], "string equality ignores case")
        XCTAssertEqual(try names(db, [f("title", .notEquals, "apples")]), ["b", "c"])
        XCTAssertEqual(try names(db, [f("title", .beginsWith, "Ca")]), ["c"])
        XCTAssertEqual(try names(db, [f("title", .beginsWith, "ca")]), [], "BEGINS_WITH is case-sensitive")
        XCTAssertEqual(try names(db, [f("priority", .in, [1, 5])]), ["b", "c"])
        XCTAssertEqual(try names(db, [f("priority", .notIn, [1, 5])]), ["a"])
        XCTAssertEqual(try names(db, [f("tags", .listContains, "fruit")]), ["a", "b"])
        XCTAssertEqual(try names(db, [f("tags", .notListContains, "fruit")]), ["c"])
        XCTAssertEqual(try names(db, [f("tags", .listContainsAny, ["red", "orange"])]), ["a", "c"])
        XCTAssertEqual(try names(db, [f("tags", .listContainsAll, ["yellow", "fruit"])]), ["b"])
        XCTAssertEqual(try names(db, [f("tags", .notListContainsAny, ["red", "orange"])]), ["b"])
        XCTAssertEqual(try names(db, [f("tags", .listMemberBeginsWith, "ye")]), ["b"])
        XCTAssertEqual(try names(db, [f("note", .containsAllTokens, "fox the QUICK")]), ["a"], "stop words and case ignored")
        XCTAssertEqual(try names(db, [f("note", .containsAnyTokens, "slow fox")]), ["a"])
        XCTAssertEqual(try names(db, [f("place", .near, ["latitude": 37.3, "longitude": -122.0], distance: 10_000)]), ["b"])
        XCTAssertEqual(try names(db, [f("priority", .greaterThan, 0), f("tags", .listContains, "fruit")]), ["a", "b"], "filters AND")
        XCTAssertEqual(try names(db, [f("recordName", .equals, ["recordName": "c"])]), ["c"])
    }

    func testSortsAndPaging() throws {
        let db = try seeded()
        XCTAssertEqual(try names(db, [], sorts: [QuerySort(fieldName: "priority", ascending: false)]), ["b", "a", "c"])
        var seen: [String] = []
        var req = QueryRequest(recordType: "Item", sorts: [QuerySort(fieldName: "priority")], resultsLimit: 1)
        repeat {
            let r = try db.query(req)
            seen += r.records.map(\.recordName)
            req.continuationMarker = r.continuationMarker
        } while req.continuationMarker != nil
        XCTAssertEqual(seen, ["c", "a", "b"])
    }

    func testMarkerOfAnotherQueryIsRefused() throws {
        let db = try seeded()
        let m = try db.query(QueryRequest(recordType: "Item", resultsLimit: 1)).continuationMarker!
        XCTAssertThrowsError(try db.query(QueryRequest(recordType: "Item", filters: [f("priority", .greaterThan, 0)], continuationMarker: m)))
        XCTAssertThrowsError(try db.query(QueryRequest(recordType: "Item", continuationMarker: "bm90IGEgbWFya2Vy")))
    }

    func testParseWebServicesQuery() throws {
        let body = try JSONParser.parse(#"{"query": {"recordType": "Item", "filterBy": [{"fieldName": "priority", "comparator": "GREATER_THAN", "fieldValue": {"value": 2}}], "sortBy": [{"fieldName": "priority", "ascending": false}]}, "resultsLimit": 1}"#)
        let (req, _) = try QueryRequest.parse(body)
        let db = try seeded()
        XCTAssertEqual(try db.query(req).records.map(\.recordName), ["b"])
        XCTAssertThrowsError(try QueryRequest.parse(try JSONParser.parse(#"{"query": {"recordType": "Item", "filterBy": [{"fieldName": "x", "comparator": "LIKE", "fieldValue": {"value": 1}}]}}"#)))
    }

    /// Markers are signed: an edited one is refused, not followed to a wrong page.
    func testAnEditedMarkerIsRefused() throws {
        let db = try seeded()
        let m = try db.query(QueryRequest(recordType: "Item", resultsLimit: 1)).continuationMarker!
        XCTAssertNoThrow(try db.query(QueryRequest(recordType: "Item", resultsLimit: 1, continuationMarker: m)))
        for edited in [String(m.dropLast()), m.replacingOccurrences(of: "ck1q.e", with: "ck1q.f"), m + "A", "ck1q." + m.dropFirst(5).reversed()] {
            XCTAssertThrowsError(try db.query(QueryRequest(recordType: "Item", resultsLimit: 1, continuationMarker: edited))) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
            }
        }
    }

    /// A value of another kind than the field's schema type can never match: BAD_REQUEST,
    /// not an empty page. Numbers compare with numbers, record names with text.
    func testAValueOfAnotherKindThanTheSchemasTypeIsRefused() throws {
        let store = TempStore()
        _ = try store.client().modify(zone: "_defaultZone", operations: [
            op(.create, "a", ["title": "Apples", "priority": 3, "place": ["latitude": 37.33, "longitude": -122.03]]),
            op(.create, "b", ["title": "bananas", "priority": 5]),
        ])
        // A new request, as each command is: it reads the schema the saves defined.
        let db = store.client()
        try db.addIndexes("Item")
        for bad in [f("priority", .equals, "abc"), f("title", .greaterThan, 3), f("place", .equals, "x"),
                    f("priority", .beginsWith, "1"), f("title", .near, ["latitude": 1, "longitude": 2], distance: 5),
                    f("createdTimestamp", .greaterThan, "soon")] {
            XCTAssertThrowsError(try names(db, [bad]), "\(bad.fieldName) \(bad.comparator)") { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
                XCTAssertTrue((e as? CloudKitError)?.reason.hasPrefix("filter on '\(bad.fieldName)'") == true, "\(e)")
            }
        }
        XCTAssertEqual(try names(db, [f("priority", .equals, 3.0)]), ["a"], "a DOUBLE against an INT64 field is a number")
        XCTAssertEqual(try names(db, [f("recordName", .equals, "b")]), ["b"], "a record name as text")
        // A field the schema does not know has no index: refused, in development as in production.
        XCTAssertThrowsError(try names(db, [f("nosuch", .equals, "x")])) { e in
            XCTAssertEqual((e as? CloudKitError)?.reason, "Field 'nosuch' is not marked queryable")
        }
    }

    /// Dates without an offset are wall-clock times in the zone given (local time on the
    /// command line); with an offset they are exact; without a zone, UTC.
    func testTimestampsWithoutAnOffsetAreReadInTheGivenZone() {
        let ny = TimeZone(identifier: "America/New_York")!
        XCTAssertEqual(Timestamps.parseISO8601("2026-11-20", timeZone: ny), 1_795_150_800_000)
        XCTAssertEqual(Timestamps.parseISO8601("2026-11-20T10:00", timeZone: ny), 1_795_186_800_000)
        XCTAssertEqual(Timestamps.parseISO8601("2026-07-01T12:00", timeZone: ny), 1_782_921_600_000)
        XCTAssertEqual(Timestamps.parseISO8601("2026-03-08T02:30", timeZone: ny), 1_772_955_000_000, "the skipped hour moves forward")
        XCTAssertEqual(Timestamps.parseISO8601("2026-11-01T01:30", timeZone: ny), 1_793_511_000_000, "the repeated hour: the first")
        XCTAssertEqual(Timestamps.parseISO8601("2026-11-20T10:00:00Z", timeZone: ny), 1_795_168_800_000)
        XCTAssertEqual(Timestamps.parseISO8601("2026-11-20T10:00:00+01:00", timeZone: ny), 1_795_165_200_000)
        XCTAssertEqual(Timestamps.parseISO8601("2026-11-20T10:00:00.250-0500", timeZone: ny), 1_795_186_800_250)
        XCTAssertEqual(Timestamps.parseISO8601("2019-10-28"), 1_572_220_800_000)
        XCTAssertNil(Timestamps.parseISO8601("2026-11-20T10:00Q", timeZone: ny))
    }
}
