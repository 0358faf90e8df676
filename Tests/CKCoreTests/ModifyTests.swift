import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

final class ModifyTests: XCTestCase {
    func testAtomicBatchInCustomZoneAppliesNothingOnFailure() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "exists")])
        let before = t.snapshot()
        let results = try db.modify(zone: "Z", operations: [op(.create, "new1"), op(.create, "exists"), op(.create, "new2")])
        XCTAssertEqual(results.map { $0.error?.code }, [.atomicError, .exists, .atomicError])
        XCTAssertEqual(before, t.snapshot())
    }

    func testNonAtomicAndDefaultZoneApplyTheGoodOperations() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "exists")])
        let r = try db.modify(zone: "Z", operations: [op(.create, "new1"), op(.create, "exists")], atomic: false)
        XCTAssertNotNil(r[0].record)
        XCTAssertEqual(r[1].error?.code, .exists)
        _ = try db.modify(zone: "_defaultZone", operations: [op(.create, "exists")])
        let d = try db.modify(zone: "_defaultZone", operations: [op(.create, "d1"), op(.create, "exists")], atomic: true)
        XCTAssertNotNil(d[0].record, "atomic is only enforced in custom zones")
    }

    func testBatchSeesItsOwnEarlierOperations() throws {
        let db = TempStore().client()
        let r = try db.modify(zone: "_defaultZone", operations: [op(.create, "a", ["n": 1]), op(.update, "a", type: nil, tag: "1", ["n": 2])])
        XCTAssertEqual(r[1].record?.recordChangeTag, "2")
        XCTAssertEqual(r[1].record?.fields["n"]?.value, 2)
    }

    func testParseRejectsBadRequests() {
        let bad: [String] = [
            #"[]"#, #"{"operations": 3}"#, #"{"operations": [{"operationType": "upsert", "record": {}}]}"#,
            #"{"operations": [{"operationType": "create", "record": {"recordName": "", "recordType": "T"}}]}"#,
            #"{"operations": [{"operationType": "create", "record": {"recordName": "x", "recordType": "T", "zoneID": {"zoneName": "../x"}}}]}"#,
            #"{"operations": [{"operationType": "create", "record": {"recordType": "T", "fields": {"_x": {"value": 1}}}}]}"#,
            #"{"operations": [], "bogus": 1}"#,
            #"{"operations": [{"operationType": "delete", "record": {}}]}"#,
        ]
        for b in bad {
            XCTAssertThrowsError(try ModifyRequest.parse(try JSONParser.parse(b)), b) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, b)
            }
        }
        // A value that does not fit its type fails its operation, not the request (ModifyResultsTests).
        let value = try? ModifyRequest.parse(try JSONParser.parse(#"{"operations": [{"operationType": "create", "record": {"recordType": "T", "fields": {"n": {"value": "a", "type": "INT64"}}}}]}"#))
        XCTAssertEqual(value?.operations.first?.invalid?.code, .badRequest)
    }

    /// Two names that differ only in Unicode normalization are two records in one request, and
    /// a reference into another zone is refused whatever its spelling.
    func testNamesInABatchAndReferenceZonesAreComparedByBytes() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z\u{E9}")
        let body = try JSONParser.parse(#"{"operations": [{"operationType": "create", "record": {"recordName": "caf\u00e9", "recordType": "Item"}}, {"operationType": "create", "record": {"recordName": "cafe\u0301", "recordType": "Item"}}]}"#)
        let req = try ModifyRequest.parse(body)
        XCTAssertEqual(req.operations.count, 2)
        let ref: JSONValue = ["recordName": "x", "action": "NONE", "zoneID": ["zoneName": "Ze\u{301}"]]
        XCTAssertEqual(try db.modify(zone: "Z\u{E9}", operations: [op(.create, "a", ["r": ref])])[0].error?.code, .badRequest)
    }
}
