import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// What a `records/modify` answers, as CloudKit does: one result per operation, in order, and
/// a value that does not fit its type failing only its own operation (a per-record BAD_REQUEST
/// in a 200), unless the zone's batch is atomic.
final class ModifyResultsTests: XCTestCase {
    let me = caller()

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func modify(_ a: CloudKitAPI, _ text: String) throws -> RecordsResponse {
        try a.modifyRecords(try ModifyRequest.parse(try body(text)), as: me)
    }

    func encoded(_ r: RecordsResponse) throws -> [[String: JSONValue]] {
        var out: [UInt8] = []
        r.encodeJSON(into: &out, pretty: false)
        return try XCTUnwrap(JSONParser.parse(out)["records"]?.arrayValue).map { try XCTUnwrap($0.objectValue) }
    }

    // MARK: one result per operation (a DELETE_SELF cascade is no result of its own)

    func testAForceDeleteThatCascadesAnswersOneResult() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try modify(a, """
            {"operations":[{"operationType":"create","record":{"recordName":"list","recordType":"List"}},
             {"operationType":"create","record":{"recordName":"item","recordType":"Item","fields":{"l":{"value":{"recordName":"list","action":"DELETE_SELF"},"type":"REFERENCE"}}}},
             {"operationType":"create","record":{"recordName":"other","recordType":"Item"}}]}
            """)
        let r = try modify(a, """
            {"operations":[{"operationType":"forceDelete","record":{"recordName":"list"}},
             {"operationType":"forceUpdate","record":{"recordName":"other","recordType":"Item","fields":{"n":{"value":2}}}}]}
            """)
        let items = try encoded(r)
        XCTAssertEqual(items.count, 2, "one result per operation: \(items)")
        XCTAssertEqual(items.first?["recordName"], "list")
        XCTAssertEqual(items.first?["deleted"], true)
        XCTAssertEqual(items.last?["recordName"], "other", "the second result answers the second operation")
        // The cascade still happened, and the change feed has it.
        let gone = try a.lookupRecords(LookupRecordsRequest(recordNames: ["item"]), as: me)
        XCTAssertEqual(gone.results.first?.error?.code, .notFound)
        let log = try a.log(LogRequest(), as: me).document["changes"]?.arrayValue ?? []
        let deleted = log.filter { $0["operation"] == "delete" }.compactMap { $0["recordName"]?.stringValue }
        XCTAssertEqual(deleted.sorted(), ["item", "list"])
    }

    // MARK: a value that does not fit its type fails its own operation

    /// CloudKit's answer, recorded (Tests/Fixtures/wire/records-modify.response.public-per-record-bad-value.json):
    /// HTTP 200, `{"records":[{"recordName", "reason":"Invalid value, expected type TIMESTAMP.", "serverErrorCode":"BAD_REQUEST"}]}`.
    func testATypedValueErrorFailsOnlyItsOperationOutsideAtomicZones() throws {
        let t = TempStore()
        let a = api(t.root)
        let r = try modify(a, """
            {"operations":[
              {"operationType":"create","record":{"recordName":"good-1","recordType":"Item","fields":{"n":{"value":1,"type":"INT64"}}}},
              {"operationType":"create","record":{"recordName":"bad-when","recordType":"Item","fields":{"when":{"value":1747999812347.89,"type":"TIMESTAMP"}}}},
              {"operationType":"create","record":{"recordName":"bad-n","recordType":"Item","fields":{"n":{"value":"43","type":"INT64"}}}},
              {"operationType":"create","record":{"recordName":"good-2","recordType":"Item","fields":{"n":{"value":2,"type":"INT64"}}}}]}
            """)
        XCTAssertEqual(r.results.map { $0.error?.code }, [nil, .badRequest, .badRequest, nil])
        let items = try encoded(r)
        XCTAssertEqual(items[1]["recordName"], "bad-when")
        XCTAssertEqual(items[1]["serverErrorCode"], "BAD_REQUEST")
        XCTAssertTrue(items[1]["reason"]?.stringValue?.hasPrefix("Invalid value, expected type TIMESTAMP") ?? false, "\(items[1])")
        XCTAssertTrue(items[2]["reason"]?.stringValue?.hasPrefix("Invalid value, expected type INT64") ?? false, "\(items[2])")
        XCTAssertNil(items[1]["zoneID"], "a per-record error names its record, as the recorded one")
        let found = try a.lookupRecords(LookupRecordsRequest(recordNames: ["good-1", "bad-when", "bad-n", "good-2"]), as: me)
        XCTAssertEqual(found.results.map { $0.error?.code }, [nil, .notFound, .notFound, nil], "the other operations are applied")
    }

    func testInAnAtomicZoneATypedValueErrorFailsTheBatchTogether() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: me)
        let before = t.snapshot()
        let r = try modify(a, """
            {"operations":[
              {"operationType":"create","record":{"recordName":"good","recordType":"Item","fields":{"n":{"value":1}}}},
              {"operationType":"create","record":{"recordName":"bad","recordType":"Item","fields":{"when":{"value":1.5,"type":"TIMESTAMP"}}}},
              {"operationType":"create","record":{"recordName":"after","recordType":"Item"}}],
             "zoneID":{"zoneName":"Lists"}}
            """)
        XCTAssertEqual(r.results.map { $0.error?.code }, [.atomicError, .badRequest, .atomicError])
        XCTAssertEqual(r.results.map { $0.error?.recordName }, ["good", "bad", "after"])
        XCTAssertEqual(t.snapshot(), before, "nothing applied")
        // atomic: false in the same zone applies the others.
        let loose = try modify(a, """
            {"operations":[
              {"operationType":"create","record":{"recordName":"good","recordType":"Item"}},
              {"operationType":"forceUpdate","record":{"recordName":"bad","recordType":"Item","fields":{"b":{"value":"not base64!","type":"BYTES"}}}}],
             "zoneID":{"zoneName":"Lists"},"atomic":false}
            """)
        XCTAssertEqual(loose.results.map { $0.error?.code }, [nil, .badRequest])
    }

    /// A malformed request is still refused whole: nothing to answer per item.
    func testAMalformedRequestIsStillRefusedWhole() throws {
        for text in ["[]", #"{"operations":3}"#, #"{"operations":[],"extra":1}"#, #"{"operations":[{"operationType":"make","record":{}}]}"#,
                     #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":{"f":{"valu":1}}}}]}"#,
                     #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":3}}]}"#] {
            XCTAssertThrowsError(try ModifyRequest.parse(try body(text)), text) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, text)
            }
        }
    }

    /// Other readers of a record dictionary (`ck import`, `record save` from stdin) still refuse
    /// a bad value before anything is written.
    func testOtherReadersOfARecordStillRefuseABadValue() throws {
        XCTAssertThrowsError(try ModifyRequest.parseRecord(try body(#"{"recordName":"a","recordType":"T","fields":{"n":{"value":"43","type":"INT64"}}}"#), type: .create)) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
        }
    }
}
