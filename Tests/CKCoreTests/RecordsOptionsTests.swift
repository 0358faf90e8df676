import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The request options CloudKit JS sends to the records endpoints, as the bodies it sends:
/// `zoneWide` (a query of every zone), `numbersAsStrings` (INT64 and DOUBLE values as strings,
/// both ways), and `desiredKeys` inside one operation or one lookup item.
final class RecordsOptionsTests: XCTestCase {
    let me = caller()

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    /// A store with the schema the queries need (indexed as production would need them) and
    /// the zones Lists and Work.
    func store() throws -> (TempStore, CloudKitAPI) {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.importSchema(SchemaImportRequest(text: """
            DEFINE SCHEMA
                RECORD TYPE Item (
                    "___recordID" REFERENCE QUERYABLE,
                    n INT64 QUERYABLE SORTABLE,
                    price DOUBLE QUERYABLE SORTABLE,
                    counts LIST<INT64>,
                    when TIMESTAMP,
                    title STRING,
                    GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
                );
            """), as: me)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists"), .init(.create, "Work")]), as: me)
        return (t, a)
    }

    func encoded(_ r: some ResponseBody) throws -> [[String: JSONValue]] {
        var out: [UInt8] = []
        r.encodeJSON(into: &out, pretty: false)
        return try XCTUnwrap(JSONParser.parse(out)["records"]?.arrayValue).map { try XCTUnwrap($0.objectValue) }
    }

    func value(_ item: [String: JSONValue], _ field: String) -> JSONValue? { item["fields"]?[field]?["value"] }

    // MARK: zoneWide

    func save(_ a: CloudKitAPI, _ name: String, zone: String, n: Int64) throws {
        let r = try a.modifyRecords(ModifyRequest(operations: [op(.create, name, ["n": .int(n)])], zoneName: zone), as: me)
        XCTAssertNil(r.failures.first)
    }

    /// Every page of a query body, following the markers; each record as `name@zone`.
    func pages(_ a: CloudKitAPI, _ text: String) throws -> [[String]] {
        var out: [[String]] = []
        var marker: String?
        repeat {
            var b = try body(text)
            if let m = marker, case .object(var o) = b { o["continuationMarker"] = .string(m); b = .object(o) }
            let r = try a.queryRecords(try QueryRecordsRequest(json: b), as: me)
            out.append(r.records.map { "\($0.recordName)@\($0.zoneID.zoneName)" })
            marker = r.continuationMarker
        } while marker != nil && out.count < 20
        return out
    }

    func testZoneWideQueriesEveryZoneInOneOrder() throws {
        let (t, a) = try store()
        defer { withExtendedLifetime(t) {} }
        try save(a, "y", zone: ZoneID.defaultZoneName, n: 0)
        try save(a, "x", zone: "Work", n: 1)
        try save(a, "x", zone: "Lists", n: 1)
        try save(a, "z", zone: "Work", n: 2)
        try save(a, "w", zone: "Lists", n: 3)
        // As CloudKit JS sends it: zoneWide true, no zoneID. Sorted across zones; equal keys by
        // record name, then zone — and a page boundary between the two x's.
        let sorted = #"{"query":{"recordType":"Item","sortBy":[{"fieldName":"n","ascending":true}]},"zoneWide":true,"resultsLimit":2}"#
        XCTAssertEqual(try pages(a, sorted), [["y@_defaultZone", "x@Lists"], ["x@Work", "z@Work"], ["w@Lists"]])
        let filtered = #"{"query":{"recordType":"Item","filterBy":[{"fieldName":"n","comparator":"GREATER_THAN_OR_EQUALS","fieldValue":{"value":1}}],"sortBy":[{"fieldName":"n","ascending":false}]},"zoneWide":true}"#
        XCTAssertEqual(try pages(a, filtered), [["w@Lists", "z@Work", "x@Lists", "x@Work"]])
        // Unsorted: by record name, then zone.
        XCTAssertEqual(try pages(a, #"{"query":{"recordType":"Item"},"zoneWide":true,"resultsLimit":3}"#).flatMap { $0 },
                       ["w@Lists", "x@Lists", "x@Work", "y@_defaultZone", "z@Work"])
        // Every record says its zone.
        let one = try a.queryRecords(try QueryRecordsRequest(json: try body(#"{"query":{"recordType":"Item"},"zoneWide":true}"#)), as: me)
        XCTAssertEqual(try encoded(one).compactMap { $0["zoneID"]?["zoneName"]?.stringValue }, ["Lists", "Lists", "Work", "_defaultZone", "Work"])
        // A zoneID wins over zoneWide (Apple: zoneWide is ignored when a zoneID is given);
        // zoneWide false is one zone, as before.
        XCTAssertEqual(try pages(a, #"{"query":{"recordType":"Item"},"zoneWide":true,"zoneID":{"zoneName":"Work"}}"#), [["x@Work", "z@Work"]])
        XCTAssertEqual(try pages(a, #"{"query":{"recordType":"Item"},"zoneWide":false}"#), [["y@_defaultZone"]])
        // A zone-wide marker is no marker of one zone's query.
        let first = try a.queryRecords(try QueryRecordsRequest(json: try body(sorted)), as: me)
        let marker = try XCTUnwrap(first.continuationMarker)
        XCTAssertThrowsError(try a.queryRecords(try QueryRecordsRequest(json: try body(
            #"{"query":{"recordType":"Item","sortBy":[{"fieldName":"n","ascending":true}]},"resultsLimit":2,"continuationMarker":"\#(marker)"}"#)), as: me))
        // ck's --all reads the same records in the same order.
        var all: [String] = []
        try a.queryAllRecords(try QueryRecordsRequest(json: try body(sorted)), as: me) { p in
            all += p.records.map { "\($0.recordName)@\($0.zoneID.zoneName)" }
            return true
        }
        XCTAssertEqual(all, ["y@_defaultZone", "x@Lists", "x@Work", "z@Work", "w@Lists"])
    }

    /// In the shared database, zoneWide is every zone shared with the caller, and only what is
    /// shared in them.
    func testZoneWideInTheSharedDatabaseIsWhatIsSharedWithTheCaller() throws {
        let t = TempStore(signIn: false)
        defer { withExtendedLifetime(t) {} }
        for u in ["bob", "alice"] { try t.store.accounts.signIn(appleID: "\(u)@example.com", givenName: u.capitalized, familyName: nil, phone: nil) }
        let a = api(t.root)
        _ = try a.importSchema(SchemaImportRequest(text: """
            DEFINE SCHEMA
                RECORD TYPE List ("___recordID" REFERENCE QUERYABLE, title STRING, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world");
            """), as: caller("alice"))
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists"), .init(.create, "Trips")]), as: caller("alice"))
        for (zone, name) in [("Lists", "groceries"), ("Lists", "secret"), ("Trips", "trip")] {
            XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [op(.create, name, type: "List", ["title": "x"])], zoneName: zone), as: caller("alice")).failures.first)
        }
        for (zone, name) in [("Lists", "groceries"), ("Trips", "trip")] {
            let share = try a.createShare(ShareCreateRequest(zoneName: zone, recordName: name, participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readOnly)]),
                                          as: caller("alice"))
            let guid = try XCTUnwrap(share.results.first?.value?["shortGUID"]?.stringValue)
            XCTAssertNil(try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: caller("bob")).failures.first)
        }
        let r = try a.queryRecords(try QueryRecordsRequest(json: try body(#"{"query":{"recordType":"List"},"zoneWide":true}"#)), as: caller("bob", .shared))
        XCTAssertEqual(r.records.map { "\($0.recordName)@\($0.zoneID.zoneName)" }, ["groceries@Lists", "trip@Trips"])
        // alice's own zone-wide query sees all of hers.
        let own = try a.queryRecords(try QueryRecordsRequest(json: try body(#"{"query":{"recordType":"List"},"zoneWide":true}"#)), as: caller("alice"))
        XCTAssertEqual(own.records.map { "\($0.recordName)@\($0.zoneID.zoneName)" }, ["groceries@Lists", "secret@Lists", "trip@Trips"])
    }

    // MARK: numbersAsStrings

    func testNumbersAsStringsAnswersAndTakesNumberFieldsAsStrings() throws {
        let (t, a) = try store()
        defer { withExtendedLifetime(t) {} }
        // As CloudKit JS sends it: the option on the request, numbers as strings, typed or not.
        let saved = try a.modifyRecords(try ModifyRequest.parse(try body("""
            {"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"big","fields":{
              "n":{"value":"9007199254740993","type":"INT64"},"price":{"value":"1.5"},"counts":{"value":["1","2"]},"when":{"value":1700000000000},"title":{"value":"43"}}}}],
             "zoneID":{"zoneName":"Lists"},"numbersAsStrings":true}
            """)), as: me)
        XCTAssertNil(saved.failures.first, "\(saved.failures)")
        let stored = try XCTUnwrap(saved.results.first?.record)
        XCTAssertEqual(stored.fields["n"], RecordField(type: FieldType(.int64), value: .int(9_007_199_254_740_993)), "kept as the 64-bit integer it is")
        XCTAssertEqual(stored.fields["price"]?.value, .double(1.5))
        XCTAssertEqual(stored.fields["counts"]?.value, .array([.int(1), .int(2)]))
        XCTAssertEqual(stored.fields["title"]?.value, .string("43"), "a STRING field stays a string")
        let answered = try XCTUnwrap(encoded(saved).first)
        XCTAssertEqual(value(answered, "n"), .string("9007199254740993"))
        XCTAssertEqual(value(answered, "price"), .string("1.5"))
        XCTAssertEqual(value(answered, "counts"), .array([.string("1"), .string("2")]))
        XCTAssertEqual(value(answered, "when"), .int(1_700_000_000_000), "a TIMESTAMP is no number field")
        XCTAssertEqual(value(answered, "title"), .string("43"))

        // Lookup: with the option, strings; without, numbers.
        let looked = try a.lookupRecords(try LookupRecordsRequest(json: try body(#"{"records":[{"recordName":"big"}],"zoneID":{"zoneName":"Lists"},"numbersAsStrings":true}"#)), as: me)
        XCTAssertEqual(value(try XCTUnwrap(encoded(looked).first), "n"), .string("9007199254740993"))
        let plain = try a.lookupRecords(try LookupRecordsRequest(json: try body(#"{"records":[{"recordName":"big"}],"zoneID":{"zoneName":"Lists"}}"#)), as: me)
        XCTAssertEqual(value(try XCTUnwrap(encoded(plain).first), "n"), .int(9_007_199_254_740_993))

        // Query: a filter's number given as a string, typed or not; the answer in strings.
        for filter in [#"{"value":"9007199254740993"}"#, #"{"value":"9007199254740993","type":"INT64"}"#] {
            let q = try a.queryRecords(try QueryRecordsRequest(json: try body("""
                {"query":{"recordType":"Item","filterBy":[{"fieldName":"n","comparator":"EQUALS","fieldValue":\(filter)}]},"zoneID":{"zoneName":"Lists"},"numbersAsStrings":true}
                """)), as: me)
            XCTAssertEqual(q.records.map(\.recordName), ["big"], filter)
            XCTAssertEqual(value(try XCTUnwrap(encoded(q).first), "price"), .string("1.5"))
        }
        // Without the option a string is no number: the query is refused, as before.
        XCTAssertThrowsError(try a.queryRecords(try QueryRecordsRequest(json: try body(
            #"{"query":{"recordType":"Item","filterBy":[{"fieldName":"n","comparator":"EQUALS","fieldValue":{"value":"43"}}]},"zoneID":{"zoneName":"Lists"}}"#)), as: me))
        // An asset keeps its value (with its downloadURL) among number fields as strings.
        let bytes = Array("asset bytes".utf8)
        var withAsset = ModifyRequest(operations: [RecordOperation(type: .create, recordName: "doc", recordType: "Doc", fields: [
            "file": RecordField(type: FieldType(.asset), value: ["fileChecksum": .string(AssetValue.checksum(of: bytes)), "size": .int(Int64(bytes.count))]),
            "n": RecordField(type: FieldType(.int64), value: 5),
        ])], zoneName: "Lists")
        withAsset.uploadedAssets[AssetValue.checksum(of: bytes)] = bytes
        withAsset.numbersAsStrings = true
        let doc = try XCTUnwrap(encoded(try a.modifyRecords(withAsset, as: me)).first)
        XCTAssertNotNil(value(doc, "file")?["downloadURL"]?.stringValue, "\(doc)")
        XCTAssertEqual(value(doc, "n"), .string("5"))
        // A string that is no number is still a bad value, for its own operation.
        let bad = try a.modifyRecords(try ModifyRequest.parse(try body("""
            {"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"bad","fields":{"n":{"value":"forty-three"}}}}],
             "zoneID":{"zoneName":"Lists"},"atomic":false,"numbersAsStrings":true}
            """)), as: me)
        XCTAssertEqual(bad.failures.first?.code, .badRequest)
    }

    // MARK: options of one operation, one lookup item

    func testAnOperationsOwnOptionsOverrideTheRequests() throws {
        let (t, a) = try store()
        defer { withExtendedLifetime(t) {} }
        // CloudKit JS puts desiredKeys and numbersAsStrings inside each operation.
        let r = try a.modifyRecords(try ModifyRequest.parse(try body("""
            {"operations":[
              {"operationType":"create","record":{"recordType":"Item","recordName":"a","fields":{"n":{"value":1},"title":{"value":"A"}}},"desiredKeys":["title"]},
              {"operationType":"create","record":{"recordType":"Item","recordName":"b","fields":{"n":{"value":"2"},"title":{"value":"B"}}},"numbersAsStrings":true},
              {"operationType":"create","record":{"recordType":"Item","recordName":"c","fields":{"n":{"value":3},"title":{"value":"C"}}}}],
             "zoneID":{"zoneName":"Lists"},"desiredKeys":["n"]}
            """)), as: me)
        XCTAssertNil(r.failures.first, "\(r.failures)")
        let items = try encoded(r)
        XCTAssertEqual(items[0]["fields"]?.objectValue?.keys.sorted(), ["title"], "the operation's desiredKeys")
        XCTAssertEqual(items[1]["fields"]?.objectValue?.keys.sorted(), ["n"], "the request's desiredKeys")
        XCTAssertEqual(value(items[1], "n"), .string("2"), "the operation's numbersAsStrings, both ways")
        XCTAssertEqual(value(items[2], "n"), .int(3))
        XCTAssertEqual(r.results[1].record?.fields["n"]?.value, .int(2))

        let looked = try a.lookupRecords(try LookupRecordsRequest(json: try body("""
            {"records":[{"recordName":"a","desiredKeys":["n"]},{"recordName":"b"}],"zoneID":{"zoneName":"Lists"},"desiredKeys":["title"]}
            """)), as: me)
        let found = try encoded(looked)
        XCTAssertEqual(found[0]["fields"]?.objectValue?.keys.sorted(), ["n"], "the item's desiredKeys")
        XCTAssertEqual(found[1]["fields"]?.objectValue?.keys.sorted(), ["title"], "the request's desiredKeys")
        // An option of the wrong shape is refused whole.
        XCTAssertThrowsError(try ModifyRequest.parse(try body(#"{"operations":[{"operationType":"forceDelete","record":{"recordName":"a"},"numbersAsStrings":"yes"}]}"#)))
        XCTAssertThrowsError(try LookupRecordsRequest(json: try body(#"{"records":[{"recordName":"a","desiredKeys":"n"}]}"#)))
    }

    /// CloudKit JS's fetchRecords sends its `assetPrivacyMaskType` option in the records/lookup
    /// body (cloudkit.js 2.6.4 lists it beside zoneID, desiredKeys and numbersAsStrings): taken,
    /// as the service takes it, and ignored (ck's downloadURLs have no mask); a value that is
    /// not a string is refused.
    func testALookupTakesCloudKitJSsAssetPrivacyMaskType() throws {
        let (t, a) = try store()
        defer { withExtendedLifetime(t) {} }
        XCTAssertNil(try a.modifyRecords(try ModifyRequest.parse(try body(#"{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"a","fields":{"n":{"value":1}}}}],"zoneID":{"zoneName":"Lists"}}"#)), as: me).failures.first)
        let looked = try a.lookupRecords(try LookupRecordsRequest(json: try body(#"{"records":[{"recordName":"a"}],"zoneID":{"zoneName":"Lists"},"assetPrivacyMaskType":"NONE"}"#)), as: me)
        XCTAssertEqual(try encoded(looked).first?["recordName"], .string("a"))
        XCTAssertThrowsError(try LookupRecordsRequest(json: try body(#"{"records":[{"recordName":"a"}],"assetPrivacyMaskType":3}"#)))
    }
}
