import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The zone endpoints of the API, in-process: `zones/list`, `zones/lookup`, `zones/modify`
/// (their Web Services bodies, every operation attempted, a failed one an item of its own) and ck's purge
/// (its owner's only).
final class APIZonesTests: XCTestCase {
    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func names(_ r: ItemsResponse) -> [String] { r.results.compactMap { $0.value?["zoneID"]?["zoneName"]?.stringValue } }

    func create(_ a: CloudKitAPI, _ zones: String..., as c: Caller? = nil) throws -> ItemsResponse {
        try a.modifyZones(ZonesModifyRequest(operations: zones.map { .init(.create, $0) }), as: c ?? caller())
    }

    func assertBadRequest(_ text: String, _ words: String, _ parse: (JSONValue) throws -> Any, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(try body(text)), text, file: file, line: line) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, text, file: file, line: line)
            XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \((e as? CloudKitError)?.reason ?? "\(e)")", file: file, line: line)
        }
    }

    // MARK: bodies

    func testZonesModifyBodiesAreReadStrictly() throws {
        // As CloudKit JS sends them, and a zone copied from a zones/list answer.
        let good = try ZonesModifyRequest(json: try body("""
            {"operations": [{"zone": {"zoneID": {"zoneName": "A"}}, "operationType": "create"},
                            {"operationType": "delete", "zone": {"zoneID": {"zoneName": "B", "ownerRecordName": "_x", "zoneType": "REGULAR_CUSTOM_ZONE"},
                                                                  "atomic": true, "syncToken": "t", "isEligibleForZoneShare": true}}]}
            """))
        XCTAssertEqual(good.operations, [.init(.create, "A"), .init(.delete, "B")])
        XCTAssertFalse(good.ifExists)
        let bad: [(String, String)] = [
            (#"[]"#, "must be a JSON object, got array"),
            (#"{}"#, "operations is missing"),
            (#"{"operations": {}}"#, "operations must be an array, got object"),
            (#"{"operations": [], "atomic": true}"#, "unknown key 'atomic' in zones/modify request"),
            (#"{"operations": ["A"]}"#, "operations[0] must be a JSON object"),
            (#"{"operations": [{"operationType": "purge", "zone": {"zoneID": {"zoneName": "A"}}}]}"#, "operationType must be create or delete"),
            (#"{"operations": [{"operationType": 1, "zone": {"zoneID": {"zoneName": "A"}}}]}"#, "operationType must be create or delete"),
            (#"{"operations": [{"operationType": "create"}]}"#, "operations[0] needs a 'zone'"),
            (#"{"operations": [{"operationType": "create", "zone": {"zoneName": "A"}}]}"#, "unknown key 'zoneName' in operations[0].zone"),
            (#"{"operations": [{"operationType": "create", "zone": {}}]}"#, "needs a 'zoneID'"),
            (#"{"operations": [{"operationType": "create", "zone": {"zoneID": "A"}}]}"#, "operations[0].zone.zoneID must be a JSON object"),
            (#"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": 5}}}]}"#, "zoneName must be a string"),
            (#"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "A", "owner": "x"}}}]}"#, "unknown key 'owner'"),
            (#"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": ""}}}]}"#, "zone name must not be empty"),
            (#"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "A"}}, "extra": 1}]}"#, "unknown key 'extra' in operations[0]"),
        ]
        for (text, words) in bad { assertBadRequest(text, words) { try ZonesModifyRequest(json: $0) } }
        let many = "{\"operations\":[" + (0...Limits.operationsPerBatch).map { "{\"operationType\":\"create\",\"zone\":{\"zoneID\":{\"zoneName\":\"z\($0)\"}}}" }.joined(separator: ",") + "]}"
        XCTAssertThrowsError(try ZonesModifyRequest(json: try body(many))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .limitExceeded) }
    }

    func testZonesLookupBodiesAreReadStrictly() throws {
        XCTAssertEqual(try ZonesLookupRequest(json: try body(#"{"zones": [{"zoneName": "A"}, {"zoneName": "B", "ownerRecordName": "_o"}]}"#)).zoneNames, ["A", "B"])
        let bad: [(String, String)] = [
            (#""zones""#, "must be a JSON object, got string"),
            (#"{"zones": [{"zoneName": "A"}], "zoneID": {}}"#, "unknown key 'zoneID'"),
            (#"{"zones": "A"}"#, "zones must be an array"),
            (#"{"zones": [{"zoneID": {"zoneName": "A"}}]}"#, "unknown key 'zoneID' in zones[0]"),
            (#"{"zones": [{"zoneName": null}]}"#, "zoneName must be a string"),
            (#"{"zones": [{"zoneName": "A", "ownerRecordName": 3}]}"#, "ownerRecordName must be a string"),
        ]
        for (text, words) in bad { assertBadRequest(text, words) { try ZonesLookupRequest(json: $0) } }
    }

    // MARK: behaviour

    func testZonesAreListedAndLookedUpOneResultPerName() throws {
        let t = TempStore()
        let a = api(t.root)
        XCTAssertEqual(names(try create(a, "Lists", "Board")), ["Lists", "Board"])
        XCTAssertEqual(names(try a.listZones(as: caller())), ["_defaultZone", "Board", "Lists"])
        let looked = try a.lookupZones(ZonesLookupRequest(zoneNames: ["Lists", "Missing", "_defaultZone"]), as: caller())
        XCTAssertEqual(looked.results.count, 3)
        XCTAssertEqual(looked.results[0].value?["zoneID"]?["zoneName"]?.stringValue, "Lists")
        XCTAssertEqual(looked.results[0].value?["atomic"], true)
        XCTAssertEqual(looked.results[1].error?.code, .zoneNotFound)
        XCTAssertEqual(looked.results[1].error?.zoneID?.zoneName, "Missing")
        XCTAssertEqual(looked.results[2].value?["atomic"], false)
        // The per-item error is a Zone Fetch Error: the envelope naming its zone.
        let item = looked.jsonValue["zones"]?.arrayValue?[1]
        XCTAssertEqual(item?["serverErrorCode"]?.stringValue, "ZONE_NOT_FOUND")
        XCTAssertEqual(item?["zoneID"]?["zoneName"]?.stringValue, "Missing")
        // A fault of zones/lookup fails it, not the others.
        _ = try FaultStore(root: t.root).add(Fault(op: FaultOperation(path: "zones/lookup")!, code: .throttled))
        XCTAssertThrowsError(try a.lookupZones(ZonesLookupRequest(zoneNames: ["Lists"]), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .throttled) }
        XCTAssertEqual(names(try a.listZones(as: caller())).count, 3)
    }

    func testEveryOperationIsAttemptedAndAFailedOneIsAnItemOfItsOwn() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try create(a, "Old", "Older")
        // "All operations are attempted": the missing zone, the default zone and a bad name
        // fail each in its place; the others are done, in order.
        let mixed = ZonesModifyRequest(operations: [.init(.create, "New"), .init(.delete, "Missing"), .init(.delete, "Old"),
                                                    .init(.delete, ZoneID.defaultZoneName), .init(.create, ""), .init(.delete, "Older")])
        let done = try a.modifyZones(mixed, as: caller())
        XCTAssertEqual(done.results.count, 6)
        XCTAssertEqual(done.results[0].value?["zoneID"]?["zoneName"]?.stringValue, "New")
        XCTAssertEqual(done.results[1].error?.code, .zoneNotFound)
        XCTAssertEqual(done.results[2].value?["deleted"], true)
        XCTAssertEqual(done.results[3].error?.code, .badRequest)
        XCTAssertEqual(done.results[4].error?.code, .badRequest)
        XCTAssertEqual(done.results[5].value?["deleted"], true)
        XCTAssertEqual(names(try a.listZones(as: caller())), ["_defaultZone", "New"])
        // Each failed item is a Zone Fetch Error naming its zone.
        let items = try XCTUnwrap(done.jsonValue["zones"]?.arrayValue)
        for (i, zone) in [(1, "Missing"), (3, ZoneID.defaultZoneName), (4, "")] {
            XCTAssertEqual(items[i]["zoneID"]?["zoneName"]?.stringValue, zone, "\(items[i])")
            XCTAssertNotNil(items[i]["serverErrorCode"]?.stringValue)
            XCTAssertNotNil(items[i]["reason"]?.stringValue)
        }
        XCTAssertEqual(items[1]["serverErrorCode"]?.stringValue, "ZONE_NOT_FOUND")
        // What is wrong with the request itself fails it whole and changes nothing.
        let before = t.snapshot()
        XCTAssertThrowsError(try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Newer"), .init(.delete, "Newer")]), as: caller())) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest, "\($0)")
        }
        let tooMany = ZonesModifyRequest(operations: (0...Limits.operationsPerBatch).map { .init(.create, "z\($0)") })
        XCTAssertThrowsError(try a.modifyZones(tooMany, as: caller())) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .limitExceeded)
            XCTAssertEqual((e as? CloudKitError)?.reason, "Your request contains \(Limits.operationsPerBatch + 1) items which is more than the maximum number of items in a single request (\(Limits.operationsPerBatch))")
            XCTAssertEqual((e as? CloudKitError)?.nextStep, .splitRequest(maxOperations: Limits.operationsPerBatch))
        }
        XCTAssertEqual(t.snapshot(), before, "a refused request changes nothing")
        // With ifExists a missing zone is left out of the answer.
        var lenient = ZonesModifyRequest(operations: [.init(.delete, "Missing"), .init(.delete, "New")])
        lenient.ifExists = true
        XCTAssertEqual(names(try a.modifyZones(lenient, as: caller())), ["New"])
        XCTAssertEqual(names(try a.listZones(as: caller())), ["_defaultZone"])
    }

    func testZonesOfThePublicAndSharedDatabasesAreNotMadeHere() throws {
        let t = TempStore()
        let a = api(t.root)
        let before = t.snapshot()
        for scope in [DatabaseScope.public, .shared] {
            let refused = try create(a, "Z", as: caller(scope))
            XCTAssertEqual(refused.results.first?.error?.code, .badRequest)
            XCTAssertEqual(refused.results.first?.error?.zoneID?.zoneName, "Z")
        }
        // Signed out: nothing is written anywhere.
        try t.store.accounts.signOut()
        let out = t.snapshot()
        XCTAssertThrowsError(try create(a, "Z")) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired) }
        XCTAssertEqual(t.snapshot(), out)
        XCTAssertNotEqual(out, before)
    }

    // MARK: the shared database

    /// alice's zones Lists (shared with bob, who accepted) and Notes (shared with carol, who
    /// did not accept); dave never invited.
    func sharedWorld() throws -> (TempStore, CloudKitAPI) {
        let t = TempStore(signIn: false)
        for u in ["dave", "carol", "bob", "alice"] { try t.store.accounts.signIn(appleID: "\(u)@example.com", givenName: nil, familyName: nil, phone: nil) }
        let a = api(t.root)
        _ = try create(a, "Lists", "Notes")
        for z in ["Lists", "Notes"] {
            _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "root", type: "List")], zoneName: z), as: caller())
        }
        let lists = try a.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "root", participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)]), as: caller())
        _ = try a.createShare(ShareCreateRequest(zoneName: "Notes", recordName: "root", participants: [ShareParticipantRequest(user: .email("carol@example.com"), permission: .readWrite)]), as: caller())
        let guid = try XCTUnwrap(lists.results[0].value?["shortGUID"]?.stringValue)
        XCTAssertNil(try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: caller(.shared, .appleID("bob@example.com"))).failures.first)
        return (t, a)
    }

    func testTheSharedDatabaseListsOnlyZonesOfAcceptedShares() throws {
        let (t, a) = try sharedWorld()
        defer { withExtendedLifetime(t) {} }
        XCTAssertEqual(names(try a.listZones(as: caller(.shared, .appleID("bob@example.com")))), ["Lists"])
        XCTAssertEqual(names(try a.listZones(as: caller(.shared, .appleID("carol@example.com")))), [], "invited, not accepted")
        XCTAssertEqual(names(try a.listZones(as: caller(.shared, .appleID("dave@example.com")))), [])
        let dave = try a.lookupZones(ZonesLookupRequest(zoneNames: ["Lists", "Notes"]), as: caller(.shared, .appleID("dave@example.com")))
        XCTAssertEqual(dave.failures.map(\.code), [.zoneNotFound, .zoneNotFound])
        XCTAssertEqual(dave.failures[0].zoneID?.ownerRecordName, dave.failures[1].zoneID?.ownerRecordName, "no owner is revealed")
    }

    func testOnlyTheOwnerPurgesAZoneAndAParticipantDeletesNone() throws {
        let (t, a) = try sharedWorld()
        let bob = caller(.shared, .appleID("bob@example.com"))
        let before = t.snapshot()
        XCTAssertThrowsError(try a.purgeZones(ZonesPurgeRequest(zoneNames: ["Lists"]), as: bob)) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .accessDenied)
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("only its owner can purge it") == true)
        }
        XCTAssertThrowsError(try a.purgeZones(ZonesPurgeRequest(zoneNames: ["Lists"], ifExists: true), as: bob)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .accessDenied) }
        // A zone the caller does not have in the shared database: no zone of theirs to purge.
        XCTAssertThrowsError(try a.purgeZones(ZonesPurgeRequest(zoneNames: ["Notes"]), as: bob)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertThrowsError(try a.purgeZones(ZonesPurgeRequest(zoneNames: ["Lists"]), as: caller(.public))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertThrowsError(try a.purgeZones(ZonesPurgeRequest(zoneNames: [ZoneID.defaultZoneName]), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        // Deleting it from the shared database is leaving its share: said as a next step, not a command.
        do {
            let ck = try a.modifyZones(ZonesModifyRequest(operations: [.init(.delete, "Lists")]), as: bob).results.first?.error
            XCTAssertEqual(ck?.code, .badRequest)
            XCTAssertEqual(ck?.nextStep, .leaveShare)
            XCTAssertFalse(ck?.reason.contains("ck ") == true, ck?.reason ?? "")
        }
        XCTAssertEqual(t.snapshot(), before)
        // The owner purges it (a missing one left out with ifExists), every name checked first.
        XCTAssertThrowsError(try a.purgeZones(ZonesPurgeRequest(zoneNames: ["Lists", "Missing"]), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .zoneNotFound) }
        XCTAssertEqual(t.snapshot(), before)
        let purged = try a.purgeZones(ZonesPurgeRequest(zoneNames: ["Lists", "Missing", "Lists"], ifExists: true), as: caller())
        XCTAssertEqual(names(purged), ["Lists"])
        XCTAssertEqual(purged.results[0].value?["purged"], true)
        XCTAssertEqual(names(try a.listZones(as: bob)), [])
    }
}
