import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// Issue 30, item 8: a subscription's notificationInfo has every key CloudKit has, its
/// notifications carry them (desiredKeys' fields as recordFields), and the push payload a
/// device receives is built from them by one builder.
final class NotificationInfoTests: XCTestCase {
    static let container = "iCloud.com.example.test"

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    static let fullInfo = #"""
    {"alertBody": "New item", "alertLocalizationKey": "NEW_ITEM", "alertLocalizationArgs": ["title", "n"],
     "alertActionLocalizationKey": "OPEN", "alertLaunchImage": "launch.png",
     "title": "Lists", "titleLocalizationKey": "LISTS", "titleLocalizationArgs": ["title"],
     "subtitle": "Groceries", "subtitleLocalizationKey": "SUB", "subtitleLocalizationArgs": ["n"],
     "soundName": "ping.aiff", "shouldBadge": true, "category": "ITEM", "collapseIDKey": "items",
     "desiredKeys": ["title", "n", "photo"], "shouldSendMutableContent": true, "shouldSendContentAvailable": true}
    """#

    func testEveryKeyIsTakenAndShownBack() throws {
        let t = TempStore()
        let a = api(t.root)
        let req = try SubscriptionsModifyRequest(json: try body(#"{"operations": [{"operationType": "create", "subscription": {"subscriptionID": "q", "subscriptionType": "query", "query": {"recordType": "Item"}, "notificationInfo": \#(Self.fullInfo)}}]}"#))
        let saved = try a.modifySubscriptions(req, as: caller(device: "A"))
        let info = try XCTUnwrap(saved.results.first?.value?["notificationInfo"])
        for key in ["alertBody", "alertLocalizationKey", "alertLocalizationArgs", "alertActionLocalizationKey", "alertLaunchImage", "title",
                    "titleLocalizationKey", "titleLocalizationArgs", "subtitle", "subtitleLocalizationKey", "subtitleLocalizationArgs", "soundName",
                    "shouldBadge", "category", "collapseIDKey", "shouldSendMutableContent", "shouldSendContentAvailable"] {
            XCTAssertNotNil(info[key], key)
        }
        // desiredKeys is CloudKit JS's additionalFields: one key, shown by its Web Services name.
        XCTAssertEqual(info["additionalFields"], ["title", "n", "photo"])
        XCTAssertNil(info["desiredKeys"])
        // What ck printed is taken back as it is.
        let printed = try XCTUnwrap(saved.results.first?.value)
        let listed = try a.listSubscriptions(as: caller(device: "A"))
        XCTAssertEqual(listed.results.first?.value, printed)
        XCTAssertEqual(try Subscription(json: printed).notificationInfo, try Subscription(json: try body(#"{"subscriptionType": "query", "query": {"recordType": "Item"}, "notificationInfo": \#(Self.fullInfo)}"#)).notificationInfo)
    }

    func testBadNotificationInfoIsRefused() throws {
        let bad: [(String, String)] = [
            (#"{"desiredKeys": ["ok"], "additionalFields": ["ok"]}"#, "both desiredKeys and additionalFields"),
            (#"{"desiredKeys": ["not a field"]}"#, "desiredKeys"),
            (#"{"titleLocalizationArgs": "title"}"#, "titleLocalizationArgs has a value of the wrong type"),
            (#"{"shouldSendMutableContent": "yes"}"#, "shouldSendMutableContent has a value of the wrong type"),
            (#"{"collapseIDKey": 1}"#, "collapseIDKey has a value of the wrong type"),
        ]
        for (info, words) in bad {
            XCTAssertThrowsError(try Subscription(json: try body(#"{"subscriptionType": "zone", "notificationInfo": \#(info)}"#)), info) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, info)
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(info): \((e as? CloudKitError)?.reason ?? "\(e)")")
            }
        }
    }

    func testAQueryNotificationCarriesTheInfoAndThePushIsWhatADeviceReceives() throws {
        let t = TempStore()
        let a = api(t.root)
        let req = try SubscriptionsModifyRequest(json: try body(#"{"operations": [{"operationType": "create", "subscription": {"subscriptionID": "q", "subscriptionType": "query", "query": {"recordType": "Item"}, "notificationInfo": \#(Self.fullInfo)}}]}"#))
        _ = try a.modifySubscriptions(req, as: caller(device: "A"))
        _ = try a.listNotifications(NotificationsRequest(), as: caller(device: "A"))
        let fields: [String: JSONValue] = ["title": "Milk", "n": 2]
        var create = op(.create, "i1", type: "Item", fields)
        create.fields["photo"] = try RecordField.parse(name: "photo", json: ["value": "AAEC", "type": "BYTES"])
        XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [create]), as: caller(device: "B")).failures.first)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.forceUpdate, "i1", type: "Item", ["n": 3])]), as: caller(device: "B"))
        let notes = try a.listNotifications(NotificationsRequest(), as: caller(device: "A")).notifications
        XCTAssertEqual(notes.count, 2)
        let n = notes[0]
        XCTAssertEqual(n["alertBody"], "New item")
        XCTAssertEqual(n["alertLocalizationArgs"], ["Milk", "2"])
        XCTAssertEqual(n["titleLocalizationArgs"], ["Milk"])
        XCTAssertEqual(n["subtitleLocalizationArgs"], ["2"])
        XCTAssertEqual(n["soundName"], "ping.aiff")
        XCTAssertEqual(n["category"], "ITEM")
        XCTAssertEqual(n["collapseID"], "items")
        XCTAssertEqual(n["contentAvailable"], true)
        XCTAssertEqual(n["mutableContent"], true)
        // desiredKeys' fields reach the notification as recordFields (not BYTES: a push carries no bytes).
        XCTAssertEqual(n["recordFields"], ["title": "Milk", "n": 2])
        XCTAssertEqual(notes[1]["recordFields"], ["title": "Milk", "n": 3])
        // Each badge-bearing notification raises the badge; reading clears it.
        XCTAssertEqual(n["badge"], 1)
        XCTAssertEqual(notes[1]["badge"], 2)

        let push = PushPayload.payload(n)
        XCTAssertEqual(push["aps"]?["alert"], [
            "body": "New item", "loc-key": "NEW_ITEM", "loc-args": ["Milk", "2"], "action-loc-key": "OPEN", "launch-image": "launch.png",
            "title": "Lists", "title-loc-key": "LISTS", "title-loc-args": ["Milk"],
            "subtitle": "Groceries", "subtitle-loc-key": "SUB", "subtitle-loc-args": ["2"],
        ])
        XCTAssertEqual(push["aps"]?["sound"], "ping.aiff")
        XCTAssertEqual(push["aps"]?["badge"], 1)
        XCTAssertEqual(push["aps"]?["category"], "ITEM")
        XCTAssertEqual(push["aps"]?["content-available"], 1)
        XCTAssertEqual(push["aps"]?["mutable-content"], 1)
        XCTAssertEqual(push["ck"]?["cid"], .string(Self.container))
        XCTAssertEqual(push["ck"]?["nid"], n["notificationID"])
        let qry = try XCTUnwrap(push["ck"]?["qry"])
        XCTAssertEqual(qry["dbs"], 1)
        XCTAssertEqual(qry["sid"], "q")
        XCTAssertEqual(qry["rid"], "i1")
        XCTAssertEqual(qry["fo"], 1)
        XCTAssertEqual(qry["zid"], "_defaultZone")
        XCTAssertEqual(qry["af"], ["title": "Milk", "n": 2])

        try a.markNotificationsRead(through: try a.listNotifications(NotificationsRequest(), as: caller(device: "A")).cursor, as: caller(device: "A"))
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.forceUpdate, "i1", type: "Item", ["n": 4])]), as: caller(device: "B"))
        XCTAssertEqual(try a.listNotifications(NotificationsRequest(), as: caller(device: "A")).notifications.first?["badge"], 1)
    }

    func testASubscriptionWithoutInfoPushesASilentlyEmptyAps() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.client().createZone("Z")
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(Subscription(subscriptionID: "z", kind: .zone, zoneName: "Z"))]), as: caller(device: "A"))
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "r")], zoneName: "Z"), as: caller(device: "B"))
        let n = try XCTUnwrap(try a.listNotifications(NotificationsRequest(), as: caller(device: "A")).notifications.first)
        XCTAssertNil(n["badge"])
        XCTAssertEqual(PushPayload.payload(n), ["aps": [:], "ck": ["cid": .string(Self.container), "nid": n["notificationID"]!,
                                                                   "fet": ["dbs": 1, "sid": "z", "zid": "Z", "zoid": n["zoneID"]!["ownerRecordName"]!]]])
    }
}
