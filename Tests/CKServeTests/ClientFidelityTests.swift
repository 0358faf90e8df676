import CKCore
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// What CloudKit JS gets from ck serve where CloudKit answers per item or per client, in-process
/// over real sockets: zones/modify and subscriptions/modify attempt every operation (a failed
/// one is an item of a 200 answer), development refuses the queries production refuses, and a
/// web client is not pushed its own changes.
final class ClientFidelityTests: XCTestCase {
    func items(_ a: HTTPTestClient.Answer, _ key: String, file: StaticString = #filePath, line: UInt = #line) -> [[String: Any]] {
        XCTAssertEqual(a.status, 200, a.text, file: file, line: line)
        return (a.json as? [String: Any])?[key] as? [[String: Any]] ?? []
    }

    func testZonesAndSubscriptionsModifyAnswerEachOperation() throws {
        let f = try ServeFixture()
        _ = items(try f.post("private", "zones/modify", #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Old"}}}]}"#), "zones")
        let zones = items(try f.post("private", "zones/modify", """
            {"operations":[{"operationType":"delete","zone":{"zoneID":{"zoneName":"Missing"}}},
                           {"operationType":"create","zone":{"zoneID":{"zoneName":"New"}}},
                           {"operationType":"delete","zone":{"zoneID":{"zoneName":"Old"}}}]}
            """), "zones")
        guard zones.count == 3 else { return XCTFail("\(zones)") }
        XCTAssertEqual(zones[0]["serverErrorCode"] as? String, "ZONE_NOT_FOUND")
        XCTAssertEqual((zones[0]["zoneID"] as? [String: Any])?["zoneName"] as? String, "Missing")
        XCTAssertNotNil(zones[0]["reason"] as? String)
        XCTAssertNil(zones[0]["ckErrorCode"], "Apple's items carry no ckErrorCode")
        XCTAssertEqual((zones[1]["zoneID"] as? [String: Any])?["zoneName"] as? String, "New")
        XCTAssertEqual(zones[2]["deleted"] as? Bool, true)
        let listed = items(try f.get("private", "zones/list"), "zones").compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        XCTAssertEqual(listed.sorted(), ["New", "_defaultZone"])

        let subs = items(try f.post("private", "subscriptions/modify", """
            {"operations":[{"operationType":"delete","subscription":{"subscriptionID":"nope"}},
                           {"operationType":"create","subscription":{"subscriptionID":"db","subscriptionType":"database"}}]}
            """), "subscriptions")
        guard subs.count == 2 else { return XCTFail("\(subs)") }
        XCTAssertEqual(subs[0]["serverErrorCode"] as? String, "NOT_FOUND")
        XCTAssertEqual(subs[0]["subscriptionID"] as? String, "nope")
        XCTAssertEqual(subs[1]["subscriptionID"] as? String, "db")
        XCTAssertNil(subs[1]["serverErrorCode"])
    }

    /// records/query refuses in development what CloudKit refuses there (and in production):
    /// CloudKit JS's performQuery of an unknown type rejects with BAD_REQUEST "Did not find
    /// record type: …"; one without a filter needs "___recordID" QUERYABLE.
    func testDevelopmentRefusesTheQueriesProductionRefuses() throws {
        let f = try ServeFixture()
        func assertRefused(_ a: HTTPTestClient.Answer, _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(a.status, 400, a.text, file: file, line: line)
            XCTAssertEqual((a.json as? [String: Any])?["serverErrorCode"] as? String, "BAD_REQUEST", file: file, line: line)
            XCTAssertEqual((a.json as? [String: Any])?["reason"] as? String, reason, file: file, line: line)
        }
        for db in ["private", "public"] {
            assertRefused(try f.post(db, "records/query", #"{"query":{"recordType":"CkjsNoSuchType"}}"#), "Did not find record type: CkjsNoSuchType")
        }
        _ = items(try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"i1","fields":{"title":{"value":"Milk"}}}}]}"#), "records")
        assertRefused(try f.post("private", "records/query", #"{"query":{"recordType":"Item"}}"#), "Field 'recordName' is not marked queryable")
        let filtered = items(try f.post("private", "records/query", #"{"query":{"recordType":"Item","filterBy":[{"fieldName":"title","comparator":"EQUALS","fieldValue":{"value":"milk"}}]}}"#), "records")
        XCTAssertEqual(filtered.map { $0["recordName"] as? String }, ["i1"])
        _ = try f.api.addSchemaIndexes(SchemaIndexRequest(recordType: "Item", fieldName: "___recordID", indexes: [.queryable]), as: Caller(container: ServeFixture.container))
        XCTAssertEqual(items(try f.post("private", "records/query", #"{"query":{"recordType":"Item"}}"#), "records").count, 1)
    }

    /// CloudKit JS sends its clientId with every request, tokens/create included: the page's
    /// own save does not come back on its long-poll; another device's does.
    func testAWebClientIsNotPushedItsOwnSave() throws {
        let f = try ServeFixture(pollSeconds: 1)
        let session = f.session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? f.session
        let made = try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/create?ckjsBuildVersion=2420ProjectDev22&ckjsVersion=2.6.4&clientId=test-client&ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(session)",
                                          json: #"{"apnsEnvironment":"development","clientId":"test-client"}"#)
        XCTAssertEqual(made.status, 200, made.text)
        let courier = try XCTUnwrap((made.json as? [String: Any])?["webcourierURL"] as? String)
        let poll = String(courier.dropFirst(f.url.count))
        _ = items(try f.post("private", "subscriptions/modify", #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"items","subscriptionType":"query","query":{"recordType":"Item"},"firesOn":["create"]}}]}"#), "subscriptions")
        // The page's own save (clientId test-client): nothing for it.
        _ = items(try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"mine"}}]}"#), "records")
        XCTAssertEqual(try f.client().request("GET", poll).text, "null")
        // Another device's save reaches it.
        _ = try f.api.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .create, recordName: "theirs", recordType: "Item", recordChangeTag: nil, fields: [:])]),
                                    as: Caller(container: ServeFixture.container, deviceID: "phone"))
        let push = try f.client().request("GET", poll)
        XCTAssertEqual((((push.json as? [String: Any])?["ck"] as? [String: Any])?["qry"] as? [String: Any])?["rid"] as? String, "theirs", push.text)
    }
}
