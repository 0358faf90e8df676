import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The records endpoints of the API, in-process: Web Services bodies, the preflight, the
/// permission gate and ck's own record operations.
final class APIRecordsTests: XCTestCase {
    func save(_ a: CloudKitAPI, _ name: String, type: String = "Item", zone: String = ZoneID.defaultZoneName, scope: DatabaseScope = .private,
              as user: Caller.User = .device, _ fields: [String: JSONValue] = ["title": "x"]) throws -> RecordsResponse {
        try a.modifyRecords(ModifyRequest(operations: [op(.create, name, type: type, fields)], zoneName: zone), as: caller(scope, user))
    }

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    // MARK: bodies

    func testLookupBodiesAreReadStrictly() throws {
        let good = try LookupRecordsRequest(json: try body(#"{"records":[{"recordName":"a"},{"recordName":"b"}],"zoneID":{"zoneName":"Lists"},"desiredKeys":["title"],"numbersAsStrings":false}"#))
        XCTAssertEqual(good.recordNames, ["a", "b"])
        XCTAssertEqual(good.zoneName, "Lists")
        XCTAssertEqual(good.desiredKeys, ["title"])
        let bad: [(String, String)] = [
            (#"[]"#, "must be a JSON object"),
            (#"{}"#, "needs a 'records' array"),
            (#"{"records":[{"recordName":"a"}],"zone":{}}"#, "unknown key 'zone'"),
            (#"{"records":[{"name":"a"}]}"#, "unknown key 'name' in records[0]"),
            (#"{"records":[{"recordName":7}]}"#, "records[0] needs a 'recordName' string"),
            (#"{"records":[{"recordName":"a"}],"zoneID":{"zoneName":5}}"#, "zoneID.zoneName must be a string"),
            (#"{"records":[{"recordName":"a"}],"desiredKeys":"title"}"#, "desiredKeys must be an array"),
            (#"{"records":[{"recordName":""}]}"#, "record name"),
        ]
        for (text, words) in bad {
            XCTAssertThrowsError(try LookupRecordsRequest(json: try body(text)), text) { e in
                let ck = e as? CloudKitError
                XCTAssertEqual(ck?.code, .badRequest, text)
                XCTAssertTrue(ck?.reason.contains(words) == true, "\(text): \(ck?.reason ?? "")")
            }
        }
        let many = "{\"records\":[" + (0...Limits.operationsPerBatch).map { "{\"recordName\":\"r\($0)\"}" }.joined(separator: ",") + "]}"
        XCTAssertThrowsError(try LookupRecordsRequest(json: try body(many))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .limitExceeded) }
    }

    func testQueryBodyNamesItsZone() throws {
        let r = try QueryRecordsRequest(json: try body(#"{"query":{"recordType":"Item","filterBy":[{"fieldName":"n","comparator":"EQUALS","fieldValue":{"value":2}}]},"zoneID":{"zoneName":"Lists"},"resultsLimit":2}"#))
        XCTAssertEqual(r.zoneName, "Lists")
        XCTAssertEqual(r.query.resultsLimit, 2)
        XCTAssertEqual(r.query.filters.count, 1)
        XCTAssertThrowsError(try QueryRecordsRequest(json: try body(#"{"query":{"recordType":"Item"},"zoneID":{"zoneName":"../x"}}"#)))
    }

    // MARK: the preflight

    func testAFaultFailsTheRequestBeforeItReadsAndOnlyInItsZone() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try save(a, "r1")
        _ = try FaultStore(root: t.root).add(Fault(op: .endpoint(.recordsLookup), code: .throttled, retryAfter: 3, zone: ZoneID.defaultZoneName))
        XCTAssertThrowsError(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"]), as: caller())) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .throttled)
            XCTAssertEqual((e as? CloudKitError)?.retryAfter, 3)
        }
        // Another endpoint, or another zone, is not failed (the query has the index it needs).
        try t.client().addIndexes("Item")
        XCTAssertNotNil(try a.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Item")), as: caller()).records.first)
        XCTAssertThrowsError(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"], zoneName: "Other"), as: caller())) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .zoneNotFound, "the fault is scoped to _defaultZone")
        }
    }

    func testAccountStatusDecidesBeforeAnythingIsRead() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try save(a, "r1")
        _ = try save(a, "p1", scope: .public)
        try t.store.accounts.setStatus(.restricted)
        let before = t.snapshot()
        XCTAssertThrowsError(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"]), as: caller())) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired)
        }
        XCTAssertThrowsError(try save(a, "p2", scope: .public)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired) }
        // The public database is read without an account.
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["p1"]), as: caller(.public)).results.first?.record?.recordName, "p1")
        XCTAssertEqual(t.snapshot(), before)
        // A web session of the device's own account is bound by the device's status, as the CLI
        // is (issue 29; APIAuthTests covers another user's session); an unknown user is refused.
        let alice = try XCTUnwrap(t.store.accounts.user(appleID: "alice@example.com"))
        XCTAssertThrowsError(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"]), as: caller(.private, .userRecordName(alice.userRecordName)))) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired)
        }
        try t.store.accounts.setStatus(.available)
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"]), as: caller(.private, .userRecordName(alice.userRecordName))).results.first?.record?.recordName, "r1")
        XCTAssertThrowsError(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"]), as: caller(.private, .userRecordName("_0123")))) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationFailed)
        }
    }

    // MARK: the gate

    /// A public record only its creator may read: to anyone else a lookup answers exactly as
    /// for a name that never existed, and a conflicting write carries no server record.
    func testAHiddenRecordIsNotFoundInTheWordsOfAMissingOne() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        _ = try SchemaAdmin(paths: t.store.paths, container: testContainer).importSchema("""
            DEFINE SCHEMA
                RECORD TYPE Diary (t STRING, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
            """, validateOnly: false)
        let a = api(t.root)
        XCTAssertNil(try save(a, "d1", type: "Diary", scope: .public, ["t": "secret-words"]).results[0].error, "the record the test hides")
        let bob = caller(.public, .appleID("bob@example.com"))
        let hidden = try a.lookupRecords(LookupRecordsRequest(recordNames: ["d1", "ghost"]), as: bob)
        let e1 = try XCTUnwrap(hidden.results[0].error), e2 = try XCTUnwrap(hidden.results[1].error)
        XCTAssertEqual(e1.code, .notFound)
        XCTAssertEqual(e1.reason.replacingOccurrences(of: "d1", with: "ghost"), e2.reason)
        XCTAssertFalse(e1.reason.contains("Diary"))
        // Its creator reads it.
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["d1"]), as: caller(.public)).results[0].record?.recordName, "d1")
        // bob's create of the taken name is EXISTS (one namespace), without the record.
        let exists = try save(a, "d1", type: "Diary", scope: .public, as: .appleID("bob@example.com"))
        XCTAssertEqual(exists.results[0].error?.code, .exists)
        XCTAssertNil(exists.results[0].error?.serverRecord)
        XCTAssertFalse(JSONWriter.compact(exists.jsonValue).contains("secret-words"))
        // The creator's conflicting create carries it.
        XCTAssertEqual(try save(a, "d1", type: "Diary", scope: .public).results[0].error?.serverRecord?.recordName, "d1")
    }

    // MARK: ck's own

    func testDeleteIfExistsLeavesOutWhatIsNotThereAndGoesByTwoHundreds() throws {
        let t = TempStore()
        let a = api(t.root)
        var names: [String] = []
        for chunk in stride(from: 0, to: 450, by: 150) {
            let ops = (chunk..<chunk + 150).map { op(.create, "n\($0)", ["i": .int(Int64($0))]) }
            names += ops.compactMap(\.recordName)
            XCTAssertTrue(try a.modifyRecords(ModifyRequest(operations: ops), as: caller()).failures.isEmpty)
        }
        let gone = try a.deleteRecords(DeleteRecordsRequest(recordNames: names + ["missing", "n0"], ifExists: true), as: caller())
        XCTAssertEqual(gone.results.count, 450)
        XCTAssertTrue(gone.failures.isEmpty)
        try t.client().addIndexes("Item")
        XCTAssertEqual(try a.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Item")), as: caller()).records.count, 0)
        let missing = try a.deleteRecords(DeleteRecordsRequest(recordNames: ["missing"]), as: caller())
        XCTAssertEqual(missing.failures.first?.code, .notFound)
        XCTAssertThrowsError(try a.deleteRecords(DeleteRecordsRequest(recordNames: ["a", "b"], recordChangeTag: "1"), as: caller()))
    }

    func testFieldTypeHintsComeFromTheSchemaThenTheRecord() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try save(a, "r1", ["title": "text", "n": .int(3)])
        let hints = try a.fieldTypeHints(FieldTypeHintsRequest(recordType: "Item", fieldNames: ["title", "n", "new", "createdTimestamp"]), as: caller())
        XCTAssertEqual(hints["title"]?.type, FieldType(.string))
        XCTAssertEqual(hints["n"]?.type, FieldType(.int64))
        XCTAssertTrue(hints["n"]?.origin.contains("schema of record type 'Item'") == true)
        XCTAssertNil(hints["new"], "a field nobody knows is the front end's to infer")
        XCTAssertNil(hints["createdTimestamp"], "a save's fields are the record's own")
        let filters = try a.fieldTypeHints(FieldTypeHintsRequest(recordType: "Item", fieldNames: ["createdTimestamp", "___recordID"], forFilters: true), as: caller())
        XCTAssertEqual(filters["createdTimestamp"]?.type, FieldType(.timestamp))
        XCTAssertEqual(filters["___recordID"]?.type, FieldType(.reference))
    }

    func testAnImportChecksEverythingFirstThenReportsEachRecord() throws {
        let t = TempStore()
        let a = api(t.root)
        let before = t.snapshot()
        let bad = Array("{\"recordName\":\"a\",\"recordType\":\"Item\"}\nnot json\n".utf8)
        XCTAssertThrowsError(try a.importSession(ImportRequest(input: bad), as: caller())) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("line 2") == true)
        }
        XCTAssertEqual(t.snapshot(), before, "bad input writes nothing")
        let lines = (0..<5).map { "{\"recordName\":\"i\($0)\",\"recordType\":\"Item\",\"fields\":{\"n\":{\"value\":\($0)}},\"zoneID\":{\"zoneName\":\"Box\"}}" }
        let session = try a.importSession(ImportRequest(input: Array(lines.joined(separator: "\n").utf8), batchSize: 2), as: caller())
        XCTAssertEqual(session.count, 5)
        var batches: [Int] = []
        let summary = try session.run { batches.append($0.results.count) }
        XCTAssertEqual(batches, [2, 2, 1])
        XCTAssertEqual(summary.total, 5)
        XCTAssertEqual(summary.unchanged, 0)
        // Again: every record is identical, so nothing is written.
        let again = try a.importSession(ImportRequest(input: Array(lines.joined(separator: "\n").utf8)), as: caller()).run { _ in }
        XCTAssertEqual(again.unchanged, 5)
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["i4"], zoneName: "Box"), as: caller()).results[0].record?.fields["n"]?.value, .int(4))
    }

    func testResponseBodiesEncodeAsTheirTrees() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try save(a, "r1")
        let lookup = try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1", "nope"]), as: caller())
        var bytes: [UInt8] = []
        lookup.encodeJSON(into: &bytes, pretty: true)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), JSONWriter.pretty(lookup.jsonValue).trimmingCharacters(in: .newlines))
        XCTAssertEqual(lookup.jsonValue["records"]?.arrayValue?.count, 2)
        XCTAssertNil(lookup.jsonValue["records"]?.arrayValue?[1]["zoneID"], "a per-record error names its record, not its zone")
        try t.client().addIndexes("Item")
        let q = try a.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Item", resultsLimit: 1)), as: caller())
        XCTAssertNil(q.members["continuationMarker"], "no marker when nothing more follows")
    }
}
