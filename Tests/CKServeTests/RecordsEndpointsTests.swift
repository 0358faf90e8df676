import CKCore
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// The records endpoints over HTTP with the bodies Apple's CloudKit JS sends: per-record
/// failures inside a 200, one result per operation, the 200-item limit, the 1 MB record in
/// bytes, and the options zoneWide, numbersAsStrings and an operation's own desiredKeys.
final class RecordsEndpointsTests: XCTestCase {
    func records(_ a: HTTPTestClient.Answer, file: StaticString = #filePath, line: UInt = #line) -> [[String: Any]] {
        XCTAssertEqual(a.status, 200, a.text, file: file, line: line)
        guard let r = (a.json as? [String: Any])?["records"] as? [[String: Any]] else { XCTFail("no records: \(a.text)", file: file, line: line); return [] }
        return r
    }

    func envelope(_ a: HTTPTestClient.Answer) -> [String: Any] { a.json as? [String: Any] ?? [:] }

    func fieldValue(_ r: [String: Any], _ f: String) -> Any? { ((r["fields"] as? [String: Any])?[f] as? [String: Any])?["value"] }

    func fixture() throws -> ServeFixture {
        let f = try ServeFixture()
        _ = try f.api.importSchema(SchemaImportRequest(text: """
            DEFINE SCHEMA
                RECORD TYPE CkjsItem (
                    "___recordID" REFERENCE QUERYABLE,
                    n INT64 QUERYABLE SORTABLE,
                    title STRING,
                    GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
                );
            """), as: f.alice)
        XCTAssertEqual(try f.post("private", "zones/modify", #"{"operations":[{"zone":{"zoneID":{"zoneName":"ckjs-zone"}},"operationType":"create"}]}"#).status, 200)
        return f
    }

    func testABadValueIsAnItemOfA200AndTheOthersAreApplied() throws {
        let f = try fixture()
        let saved = records(try f.post("private", "records/modify", """
            {"operations":[{"operationType":"create","record":{"recordType":"CkjsItem","recordName":"p1","fields":{"title":{"value":"item 1"}}}},
             {"operationType":"create","record":{"recordType":"CkjsItem","recordName":"p2","fields":{"when":{"value":1747999812347.89,"type":"TIMESTAMP"}}}},
             {"operationType":"create","record":{"recordType":"CkjsItem","recordName":"p3","fields":{"n":{"value":"43","type":"INT64"}}}}]}
            """))
        XCTAssertEqual(saved.map { $0["serverErrorCode"] as? String ?? "ok" }, ["ok", "BAD_REQUEST", "BAD_REQUEST"])
        XCTAssertEqual(saved.map { $0["recordName"] as? String }, ["p1", "p2", "p3"])
        guard saved.count == 3 else { return }
        XCTAssertTrue((saved[1]["reason"] as? String ?? "").hasPrefix("Invalid value, expected type TIMESTAMP"), "\(saved[1])")
        XCTAssertNil(saved[1]["ckErrorCode"])
        XCTAssertEqual(records(try f.post("private", "records/lookup", #"{"records":[{"recordName":"p1"},{"recordName":"p2"}]}"#)).map { $0["serverErrorCode"] as? String ?? "ok" },
                       ["ok", "NOT_FOUND"], "the good operation is applied")
        // In a custom zone the atomic batch fails together, nothing applied.
        let atomic = records(try f.post("private", "records/modify", """
            {"operations":[{"operationType":"create","record":{"recordType":"CkjsItem","recordName":"a1"}},
             {"operationType":"create","record":{"recordType":"CkjsItem","recordName":"a2","fields":{"n":{"value":1.5,"type":"INT64"}}}}],
             "zoneID":{"zoneName":"ckjs-zone"}}
            """))
        XCTAssertEqual(atomic.map { $0["serverErrorCode"] as? String }, ["ATOMIC_ERROR", "BAD_REQUEST"])
        // A malformed request is still refused whole.
        let malformed = try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"CkjsItem","fields":{"n":{"valu":1}}}}]}"#)
        XCTAssertEqual(malformed.status, 400)
        XCTAssertEqual(envelope(malformed)["serverErrorCode"] as? String, "BAD_REQUEST")
    }

    func testEachOperationHasOneResultEvenWhenADeletionCascades() throws {
        let f = try fixture()
        _ = records(try f.post("private", "records/modify", """
            {"operations":[{"operationType":"create","record":{"recordType":"CkjsItem","recordName":"list"}},
             {"operationType":"create","record":{"recordType":"CkjsItem","recordName":"child","fields":{"up":{"value":{"recordName":"list","action":"DELETE_SELF"}}}}},
             {"operationType":"create","record":{"recordType":"CkjsItem","recordName":"p5"}}],"zoneID":{"zoneName":"ckjs-zone"}}
            """))
        // deleteRecords always sends forceDelete.
        let deleted = records(try f.post("private", "records/modify", """
            {"operations":[{"operationType":"forceDelete","record":{"recordName":"list"}},{"operationType":"forceDelete","record":{"recordName":"p5"}}],"zoneID":{"zoneName":"ckjs-zone"}}
            """))
        XCTAssertEqual(deleted.map { $0["recordName"] as? String }, ["list", "p5"], "one result per operation, by index")
        XCTAssertEqual(records(try f.post("private", "records/lookup", #"{"records":[{"recordName":"child"}],"zoneID":{"zoneName":"ckjs-zone"}}"#)).first?["serverErrorCode"] as? String,
                       "NOT_FOUND", "the cascade happened")
    }

    func testTwoHundredItemsARequest() throws {
        let f = try fixture()
        func ops(_ n: Int) -> String { (0..<n).map { "{\"operationType\":\"create\",\"record\":{\"recordType\":\"CkjsItem\",\"recordName\":\"r\($0)\"}}" }.joined(separator: ",") }
        let over = try f.post("private", "records/modify", "{\"operations\":[\(ops(201))]}")
        XCTAssertEqual(over.status, 400, over.text)
        XCTAssertEqual(envelope(over)["serverErrorCode"] as? String, "LIMIT_EXCEEDED")
        XCTAssertEqual(envelope(over)["reason"] as? String, "Your request contains 201 items which is more than the maximum number of items in a single request (200)")
        XCTAssertEqual(records(try f.post("private", "records/modify", "{\"operations\":[\(ops(200))]}")).count, 200)
        let names = (0..<201).map { "{\"recordName\":\"r\($0)\"}" }.joined(separator: ",")
        XCTAssertEqual(try f.post("private", "records/lookup", "{\"records\":[\(names)]}").status, 400)
    }

    func testABytesFieldCountsItsBytes() throws {
        let f = try fixture()
        let b64 = Data(repeating: 0x5A, count: 800_000).base64EncodedString()
        let saved = records(try f.post("private", "records/modify", """
            {"operations":[{"operationType":"create","record":{"recordType":"Blob","recordName":"big","fields":{"b":{"value":"\(b64)","type":"BYTES"}}}}]}
            """))
        XCTAssertNil(saved.first?["serverErrorCode"], "\(saved.first?["reason"] ?? "")")
        XCTAssertEqual(saved.first?["recordName"] as? String, "big")
    }

    func testZoneWideQueriesEveryZone() throws {
        let f = try fixture()
        for (zone, name, n) in [("_defaultZone", "d", 2), ("ckjs-zone", "z1", 1), ("ckjs-zone", "z3", 3)] {
            _ = records(try f.post("private", "records/modify", """
                {"operations":[{"operationType":"create","record":{"recordType":"CkjsItem","recordName":"\(name)","fields":{"n":{"value":\(n)}}}}],"zoneID":{"zoneName":"\(zone)"}}
                """))
        }
        // performQuery(query, {zoneWide: true, resultsLimit: 2}): CloudKit JS drops the zoneID.
        let query = #"{"recordType":"CkjsItem","sortBy":[{"fieldName":"n","ascending":true}]}"#
        let first = try f.post("private", "records/query", "{\"query\":\(query),\"zoneWide\":true,\"resultsLimit\":2}")
        XCTAssertEqual(records(first).map { $0["recordName"] as? String }, ["z1", "d"])
        XCTAssertEqual(records(first).map { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }, ["ckjs-zone", "_defaultZone"])
        let marker = try XCTUnwrap((first.json as? [String: Any])?["continuationMarker"] as? String)
        // performQuery(previousResponse): the defaults filled in, the marker sent back verbatim.
        let next = try f.post("private", "records/query", "{\"query\":\(query),\"numbersAsStrings\":false,\"zoneWide\":true,\"resultsLimit\":2,\"continuationMarker\":\"\(marker)\"}")
        XCTAssertEqual(records(next).map { $0["recordName"] as? String }, ["z3"])
        XCTAssertNil((next.json as? [String: Any])?["continuationMarker"])
    }

    func testNumbersAsStringsAndAnOperationsOwnDesiredKeys() throws {
        let f = try fixture()
        // saveRecords(records, {numbersAsStrings: true, desiredKeys: [...]}): inside each operation.
        let saved = records(try f.post("private", "records/modify", """
            {"operations":[{"operationType":"create","record":{"recordType":"CkjsItem","recordName":"p1","fields":{"title":{"value":"item 1"},"n":{"value":"9007199254740993"}}},
              "desiredKeys":["n"],"numbersAsStrings":true}],"zoneID":{"zoneName":"ckjs-zone"}}
            """))
        XCTAssertEqual((saved.first?["fields"] as? [String: Any])?.keys.sorted(), ["n"])
        XCTAssertEqual(saved.first.flatMap { fieldValue($0, "n") } as? String, "9007199254740993")
        // fetchRecords(names, {numbersAsStrings: true}), one item with its own desiredKeys.
        let looked = records(try f.post("private", "records/lookup", """
            {"records":[{"recordName":"p1","desiredKeys":["title"]},{"recordName":"p1"}],"zoneID":{"zoneName":"ckjs-zone"},"numbersAsStrings":true}
            """))
        XCTAssertEqual((looked.first?["fields"] as? [String: Any])?.keys.sorted(), ["title"])
        XCTAssertEqual(looked.last.flatMap { fieldValue($0, "n") } as? String, "9007199254740993")
        // performQuery with numbersAsStrings: the filter's number as a string, the answer in strings.
        let q = records(try f.post("private", "records/query", """
            {"query":{"recordType":"CkjsItem","filterBy":[{"fieldName":"n","comparator":"EQUALS","fieldValue":{"value":"9007199254740993"}}]},"zoneID":{"zoneName":"ckjs-zone"},"numbersAsStrings":true}
            """))
        XCTAssertEqual(q.map { fieldValue($0, "n") as? String }, ["9007199254740993"])
        // Without it, the number.
        let plain = records(try f.post("private", "records/lookup", #"{"records":[{"recordName":"p1"}],"zoneID":{"zoneName":"ckjs-zone"}}"#))
        XCTAssertEqual((plain.first.flatMap { fieldValue($0, "n") } as? NSNumber)?.int64Value, 9_007_199_254_740_993)
    }
}
