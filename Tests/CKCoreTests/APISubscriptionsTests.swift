import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Subscriptions and notifications through the API, in-process: the Web Services bodies of
/// `subscriptions/modify|lookup` as CloudKit JS sends them, every operation attempted (a failed
/// one an item of its own), and the notifications a device reads (through the permission
/// gate), marks read and drops.
final class APISubscriptionsTests: XCTestCase {
    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func ids(_ r: ItemsResponse) -> [String] { r.results.compactMap { $0.value?["subscriptionID"]?.stringValue } }

    // MARK: bodies

    func testSubscriptionBodiesAsCloudKitJSSendsThem() throws {
        let r = try SubscriptionsModifyRequest(json: try body("""
            {"operations": [
              {"operationType": "create", "subscription": {"subscriptionID": "zone-sub", "subscriptionType": "zone", "zoneID": {"zoneName": "Lists"}}},
              {"operationType": "create", "subscription": {"subscriptionID": "query-sub", "subscriptionType": "query", "zoneID": {"zoneName": "Lists"},
                 "firesOn": ["create", "update"], "firesOnce": true,
                 "query": {"recordType": "Item", "filterBy": [{"fieldName": "n", "comparator": "GREATER_THAN", "fieldValue": {"value": 2}}],
                           "sortBy": [{"fieldName": "n", "ascending": false}]},
                 "notificationInfo": {"alertBody": "new item", "shouldSendContentAvailable": true, "soundName": "ping", "shouldBadge": true}}},
              {"operationType": "update", "subscription": {"subscriptionID": "db", "subscriptionType": "database"}},
              {"operationType": "delete", "subscription": {"subscriptionID": "old"}}]}
            """))
        guard r.operations.count == 4, case .create(let zone) = r.operations[0], case .create(let query) = r.operations[1],
              case .update(let db) = r.operations[2], case .delete(let old) = r.operations[3] else { return XCTFail("\(r.operations)") }
        XCTAssertEqual(zone.kind, .zone)
        XCTAssertEqual(zone.zoneName, "Lists")
        XCTAssertEqual(query.recordType, "Item")
        XCTAssertEqual(query.firesOn, [.create, .update])
        XCTAssertTrue(query.firesOnce)
        XCTAssertEqual(query.filters.count, 1)
        XCTAssertEqual(query.alertBody, "new item")
        XCTAssertTrue(query.shouldSendContentAvailable)
        XCTAssertEqual(query.notificationInfo["soundName"], "ping")
        XCTAssertEqual(query.notificationInfo["shouldBadge"], true)
        XCTAssertEqual(db.kind, .database)
        XCTAssertEqual(old, "old")
        // A subscription ck printed is taken back as it is.
        let printed = query.json(ownerRecordName: "_o")
        XCTAssertEqual(try Subscription(json: printed), query)
        // zoneWide false without a zone: the default zone; left out: every zone.
        XCTAssertEqual(try Subscription(json: try body(#"{"subscriptionType": "query", "zoneWide": false, "query": {"recordType": "T"}}"#)).zoneName, ZoneID.defaultZoneName)
        XCTAssertNil(try Subscription(json: try body(#"{"subscriptionType": "query", "query": {"recordType": "T"}}"#)).zoneName)
    }

    func testBadSubscriptionBodiesAreRefusedNamingTheProblem() throws {
        func modify(_ sub: String, type: String = "create") -> String { #"{"operations": [{"operationType": "\#(type)", "subscription": \#(sub)}]}"# }
        let bad: [(String, String)] = [
            (#"{"operations": {}}"#, "operations must be an array"),
            (#"{"operations": [], "atomic": true}"#, "unknown key 'atomic'"),
            (#"{"operations": [{"operationType": "replace", "subscription": {"subscriptionType": "zone"}}]}"#, "operationType must be create, update or delete"),
            (#"{"operations": [{"operationType": "create"}]}"#, "needs a 'subscription'"),
            (modify(#"{"subscriptionType": "record"}"#), "subscriptionType must be query, zone or database"),
            (modify(#"{"subscriptionID": 5, "subscriptionType": "zone"}"#), "subscriptionID must be a string"),
            (modify(#"{"subscriptionType": "database"}"#, type: "update"), "needs a 'subscriptionID' to update"),
            (modify(#"{"subscriptionID": "", "subscriptionType": "database"}"#), "subscription ID must not be empty"),
            (modify(#"{"subscriptionType": "zone", "zoneID": "Lists"}"#), "zoneID must be a JSON object"),
            (modify(#"{"subscriptionType": "zone", "firesOn": ["create"]}"#), "firesOn applies only to query subscriptions"),
            (modify(#"{"subscriptionType": "query", "query": {"recordType": "T"}, "firesOn": ["insert"]}"#), "firesOn must hold create, update or delete"),
            (modify(#"{"subscriptionType": "query"}"#), "needs a 'query'"),
            (modify(#"{"subscriptionType": "query", "query": {"type": "T"}}"#), "unknown key 'type'"),
            (modify(#"{"subscriptionType": "query", "query": {"recordType": "T", "filterBy": [{"fieldName": "n", "comparator": "ABOUT", "fieldValue": {"value": 1}}]}}"#), "comparator"),
            (modify(#"{"subscriptionType": "database", "query": {"recordType": "T"}}"#), "query applies only to query subscriptions"),
            (modify(#"{"subscriptionType": "zone", "notificationInfo": {"alertBody": 3}}"#), "notificationInfo.alertBody has a value of the wrong type"),
            (modify(#"{"subscriptionType": "zone", "notificationInfo": {"vibrate": true}}"#), "unknown key 'vibrate'"),
            (modify(#"{"subscriptionType": "zone", "zoneWide": "yes"}"#), "zoneWide must be true or false"),
            (modify(#"{"subscriptionType": "zone", "colour": "red"}"#), "unknown key 'colour'"),
            (modify(#"{"subscriptionID": ""}"#, type: "delete"), "subscription ID must not be empty"),
            (#"{"operations": [{"operationType": "delete", "subscription": {"id": "x"}}]}"#, "unknown key 'id'"),
        ]
        for (text, words) in bad {
            XCTAssertThrowsError(try SubscriptionsModifyRequest(json: try body(text)), text) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, text)
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \((e as? CloudKitError)?.reason ?? "\(e)")")
            }
        }
        XCTAssertEqual(try SubscriptionsLookupRequest(json: try body(#"{"subscriptions": [{"subscriptionID": "a"}]}"#)).subscriptionIDs, ["a"])
        for (text, words) in [(#"{"subscriptions": [{"id": "a"}]}"#, "unknown key 'id'"), (#"{"subscriptions": [{}]}"#, "needs a 'subscriptionID'"),
                              (#"{"subscriptions": "a"}"#, "must be an array"), (#"{"ids": []}"#, "unknown key 'ids'")] {
            XCTAssertThrowsError(try SubscriptionsLookupRequest(json: try body(text)), text) { e in
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \((e as? CloudKitError)?.reason ?? "")")
            }
        }
    }

    // MARK: behaviour

    func testSubscriptionsAreSavedLookedUpAndDeletedEveryOperationAttempted() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller())
        let sound = try Subscription(json: try body(#"{"subscriptionType": "zone", "zoneID": {"zoneName": "Lists"}, "notificationInfo": {"soundName": "ping"}}"#))
        let saved = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(sound), .create(Subscription(subscriptionID: "db", kind: .database))]), as: caller())
        // Without an ID, the subscription's default one: saving it again replaces it.
        XCTAssertEqual(ids(saved), ["zone-Lists", "db"])
        XCTAssertEqual(saved.results[0].value?["notificationInfo"]?["soundName"]?.stringValue, "ping")
        XCTAssertEqual(ids(try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(sound)]), as: caller())), ["zone-Lists"])
        XCTAssertEqual(ids(try a.listSubscriptions(as: caller())), ["db", "zone-Lists"])
        let looked = try a.lookupSubscriptions(SubscriptionsLookupRequest(subscriptionIDs: ["db", "nope"]), as: caller())
        XCTAssertEqual(ids(looked), ["db"])
        XCTAssertEqual(looked.results[1].error?.code, .notFound)
        XCTAssertEqual(looked.results[1].error?.subscriptionID, "nope")
        // All operations are attempted: one that cannot be done is an item naming its
        // subscription; the others are done.
        let mixed = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [
            .delete("nope"),
            .update(Subscription(subscriptionID: "gone", kind: .database)),
            .create(Subscription(subscriptionID: "z", kind: .zone, zoneName: "Missing")),
            .create(Subscription(subscriptionID: "q", kind: .query)),
            .create(Subscription(subscriptionID: "db2", kind: .database)),
            .delete("db"),
        ]), as: caller())
        XCTAssertEqual(mixed.results.map { $0.error?.code }, [.notFound, .notFound, .zoneNotFound, .badRequest, nil, nil])
        let items = try XCTUnwrap(mixed.jsonValue["subscriptions"]?.arrayValue)
        for (i, id) in ["nope", "gone", "z", "q"].enumerated() {
            XCTAssertEqual(items[i]["subscriptionID"]?.stringValue, id, "\(items[i])")
            XCTAssertNotNil(items[i]["serverErrorCode"]?.stringValue)
            XCTAssertNotNil(items[i]["reason"]?.stringValue)
        }
        XCTAssertEqual(items[5], ["subscriptionID": "db", "deleted": true])
        XCTAssertEqual(ids(try a.listSubscriptions(as: caller())), ["db2", "zone-Lists"])
        // Query subscriptions are not supported in the shared database: that item fails.
        let shared = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(Subscription(subscriptionID: "q", kind: .query, recordType: "T"))]), as: caller(.shared))
        XCTAssertEqual(shared.results.first?.error?.code, .badRequest)
        // What is wrong with the request itself fails it whole and changes nothing.
        let before = t.snapshot()
        XCTAssertThrowsError(try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.delete("db2"), .delete("db2")]), as: caller())) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest)
        }
        let tooMany = SubscriptionsModifyRequest(operations: (0...Limits.operationsPerBatch).map { .delete("s\($0)") })
        XCTAssertThrowsError(try a.modifySubscriptions(tooMany, as: caller())) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .limitExceeded)
            XCTAssertEqual((e as? CloudKitError)?.reason, "Your request contains \(Limits.operationsPerBatch + 1) items which is more than the maximum number of items in a single request (\(Limits.operationsPerBatch))")
            XCTAssertEqual((e as? CloudKitError)?.nextStep, .splitRequest(maxOperations: Limits.operationsPerBatch))
        }
        let many = "{\"operations\":[" + (0...Limits.operationsPerBatch).map { "{\"operationType\":\"delete\",\"subscription\":{\"subscriptionID\":\"s\($0)\"}}" }.joined(separator: ",") + "]}"
        XCTAssertThrowsError(try SubscriptionsModifyRequest(json: try body(many))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .limitExceeded) }
        XCTAssertEqual(t.snapshot(), before, "a refused request changes nothing")
        let deleted = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.delete("db2")]), as: caller())
        XCTAssertEqual(deleted.results[0].value, ["subscriptionID": "db2", "deleted": true])
        XCTAssertEqual(ids(try a.listSubscriptions(as: caller())), ["zone-Lists"])
    }

    func testNotificationsAreReadMarkedReadAndDropped() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller())
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(Subscription(subscriptionID: "q", kind: .query, zoneName: "Lists", recordType: "Item"))]),
                                      as: caller(device: "ipad"))
        for n in ["a", "b", "c"] {
            _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, n)], zoneName: "Lists"), as: caller(device: "phone"))
        }
        let first = try a.listNotifications(NotificationsRequest(), as: caller(device: "ipad"))
        XCTAssertEqual(first.notifications.compactMap { $0["recordName"]?.stringValue }, ["a", "b", "c"])
        XCTAssertTrue(first.advanced)
        // Read on from the cursor: nothing new.
        let next = try a.listNotifications(NotificationsRequest(after: first.cursor), as: caller(device: "ipad"))
        XCTAssertTrue(next.notifications.isEmpty)
        XCTAssertFalse(next.advanced)
        // Unread until marked read.
        XCTAssertEqual(try a.listNotifications(NotificationsRequest(), as: caller(device: "ipad")).notifications.count, 3)
        try a.markNotificationsRead(through: first.cursor, as: caller(device: "ipad"))
        XCTAssertTrue(try a.listNotifications(NotificationsRequest(), as: caller(device: "ipad")).notifications.isEmpty)
        // Dropping: the newest unread go, oldest first in the answer.
        for n in ["d", "e"] { _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, n)], zoneName: "Lists"), as: caller(device: "phone")) }
        let dropped = try a.dropNotifications(NotificationsDropRequest(count: 1), as: caller(device: "ipad"))
        XCTAssertEqual(dropped.document["dropped"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue }, ["e"])
        XCTAssertEqual(try a.listNotifications(NotificationsRequest(), as: caller(device: "ipad")).notifications.compactMap { $0["recordName"]?.stringValue }, ["d"])
        XCTAssertThrowsError(try a.dropNotifications(NotificationsDropRequest(count: 0), as: caller(device: "ipad"))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        // A fault of notifications/list fails the read.
        _ = try FaultStore(root: t.root).add(Fault(op: FaultOperation(path: "notifications/list")!, code: .serviceUnavailable))
        XCTAssertThrowsError(try a.listNotifications(NotificationsRequest(), as: caller(device: "ipad"))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .serviceUnavailable) }
    }

    /// A query notification names a public record; once its type's GRANTs let only its
    /// creator read it, the notification is no longer shown to the subscriber.
    func testANotificationNamingARecordTheCallerMayNoLongerReadIsLeftOut() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        let a = api(t.root)
        let bob = caller(.public, .appleID("bob@example.com"), device: "bob-phone")
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(Subscription(subscriptionID: "q", kind: .query, recordType: "Diary"))]), as: bob)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "d1", type: "Diary", ["t": "secret-words"])]), as: caller(.public))
        XCTAssertEqual(try a.listNotifications(NotificationsRequest(), as: bob).notifications.compactMap { $0["recordName"]?.stringValue }, ["d1"])
        _ = try SchemaAdmin(paths: t.store.paths, container: testContainer).importSchema("""
            DEFINE SCHEMA
                RECORD TYPE Diary (t STRING, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
            """, validateOnly: false)
        let after = try a.listNotifications(NotificationsRequest(), as: bob)
        XCTAssertTrue(after.notifications.isEmpty, "\(after.notifications)")
        XCTAssertTrue(after.advanced, "it was read: marking read moves past it")
    }
}
