import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// Direct tests of what only a randomized test caught, or nothing did (issue 30, item 11): the
/// `<` boundary (a record equal to the value is excluded) and the order of paged results,
/// checked against an order computed here, not against ck itself.
final class QueryBoundaryAndOrderTests: XCTestCase {
    private func seeded(_ values: [Int64]) throws -> (TempStore, APIClient) {
        let t = TempStore()
        let db = t.client()
        _ = try db.modify(zone: "_defaultZone", operations: values.enumerated().map { op(.create, "r\($0.offset)", ["n": .int($0.element), "s": .string("v\($0.element)")]) })
        // Sorted queries without a filter need "___recordID" QUERYABLE, as in CloudKit.
        try db.addIndexes("Item")
        return (t, db)
    }

    private func names(_ db: APIClient, _ filters: [QueryFilter], sorts: [QuerySort] = []) throws -> [String] {
        try db.query(QueryRequest(recordType: "Item", filters: filters, sorts: sorts)).records.map(\.recordName)
    }

    private func f(_ name: String, _ c: QueryComparator, _ v: JSONValue) -> QueryFilter {
        QueryFilter(fieldName: name, comparator: c, value: field(v)!)
    }

    func testLessThanExcludesARecordEqualToTheValue() throws {
        let (t, db) = try seeded([4, 5, 6])
        defer { withExtendedLifetime(t) {} }
        XCTAssertEqual(try names(db, [f("n", .lessThan, 5)]), ["r0"], "5 is not < 5")
        XCTAssertEqual(try names(db, [f("n", .lessThanOrEquals, 5)]).sorted(), ["r0", "r1"])
        XCTAssertEqual(try names(db, [f("n", .lessThan, 4)]), [])
        XCTAssertEqual(try names(db, [f("n", .greaterThan, 5)]), ["r2"], "5 is not > 5")
        XCTAssertEqual(try names(db, [f("s", .lessThan, "v5")]), ["r0"], "strings too")
        // Sorted on the field (the indexed path), the same boundary.
        XCTAssertEqual(try names(db, [f("n", .lessThan, 5)], sorts: [QuerySort(fieldName: "n", ascending: true)]), ["r0"])
        XCTAssertEqual(try names(db, [f("n", .lessThan, 6)], sorts: [QuerySort(fieldName: "n", ascending: false)]), ["r1", "r0"])
        // Sorted on another field, or combined with a filter the index narrows by: each record
        // is tested against `<` itself.
        for asc in [true, false] {
            XCTAssertEqual(try names(db, [f("n", .lessThan, 5)], sorts: [QuerySort(fieldName: "s", ascending: asc)]), ["r0"])
            XCTAssertEqual(try names(db, [f("s", .greaterThanOrEquals, "v4"), f("n", .lessThan, 5)], sorts: [QuerySort(fieldName: "s", ascending: asc)]), ["r0"])
        }
        XCTAssertEqual(try names(db, [f("s", .beginsWith, "v"), f("n", .lessThan, 5)]), ["r0"])
        // As of a point in the history (read from the history, not the index).
        let head = try HistoryReference.parse("_defaultZone@\(try db.head(zone: "_defaultZone"))", now: 0, timeZone: nil)
        let past = try db.query(QueryRequest(recordType: "Item", filters: [f("n", .lessThan, 5)]), at: head)
        XCTAssertEqual(past.records.map(\.recordName), ["r0"])
    }

    /// Pages of every size, ascending and descending, followed by their markers: together they
    /// are the records in the order the sort asks for, each once.
    func testPagesFollowTheSortOrder() throws {
        let values: [Int64] = (0..<37).map { Int64(($0 * 17) % 37) }
        let (t, db) = try seeded(values)
        defer { withExtendedLifetime(t) {} }
        for ascending in [true, false] {
            let expected = values.enumerated().sorted { ascending ? $0.element < $1.element : $0.element > $1.element }.map { "r\($0.offset)" }
            for limit in [1, 5, 36, 37, 200] {
                var got: [String] = []
                var marker: String?
                var pages = 0
                repeat {
                    let page = try db.query(QueryRequest(recordType: "Item", sorts: [QuerySort(fieldName: "n", ascending: ascending)],
                                                                             resultsLimit: limit, continuationMarker: marker))
                    XCTAssertLessThanOrEqual(page.records.count, limit)
                    got += page.records.map(\.recordName)
                    marker = page.continuationMarker
                    pages += 1
                } while marker != nil && pages < 100
                XCTAssertEqual(got, expected, "ascending \(ascending), pages of \(limit)")
            }
        }
        // Two sorts: the second orders the ties of the first.
        let (t2, db2) = try seeded([2, 1, 2, 1, 3])
        defer { withExtendedLifetime(t2) {} }
        _ = try db2.modify(zone: "_defaultZone", operations: [("r0", "b"), ("r1", "z"), ("r2", "a"), ("r3", "c"), ("r4", "m")].map {
            op(.forceUpdate, $0.0, ["s": .string($0.1)])
        })
        var got: [String] = []
        var marker: String?
        repeat {
            let page = try db2.query(QueryRequest(recordType: "Item", sorts: [QuerySort(fieldName: "n", ascending: true), QuerySort(fieldName: "s", ascending: false)],
                                                                       resultsLimit: 2, continuationMarker: marker))
            got += page.records.map(\.recordName)
            marker = page.continuationMarker
        } while marker != nil
        XCTAssertEqual(got, ["r1", "r3", "r0", "r2", "r4"])
    }
}
