import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Subscriptions and the notifications they deliver, through subscriptions/modify and a
/// device's notifications; and a delivery redone after a crash, which reaches past the API.
final class NotificationTests: XCTestCase {
    /// A device of the store's account, through the API.
    private func device(_ t: TempStore, _ name: String, _ scope: DatabaseScope = .private) -> APIClient { t.client(caller(scope, device: name)) }

    func testSavingTheSameSubscriptionTwiceKeepsOne() throws {
        let t = TempStore()
        let d = device(t, "A")
        let s = Subscription(subscriptionID: "", kind: .database)
        var s1 = s; s1.subscriptionID = s.defaultID
        try d.saveSubscription(s1)
        try d.saveSubscription(s1)
        XCTAssertEqual(try d.subscriptionIDs(), ["database"])
        try d.deleteSubscription("database")
        XCTAssertThrowsError(try d.subscription("database")) { XCTAssertEqual(($0 as? CloudKitError)?.code, .notFound) }
    }

    func testKindsAreRefusedWhereCloudKitRefusesThem() throws {
        let t = TempStore()
        let priv = device(t, "A"), pub = device(t, "A", .public), shared = device(t, "A", .shared)
        XCTAssertThrowsError(try pub.saveSubscription(Subscription(subscriptionID: "d", kind: .database)))
        XCTAssertThrowsError(try pub.saveSubscription(Subscription(subscriptionID: "z", kind: .zone, zoneName: "_defaultZone")))
        XCTAssertThrowsError(try shared.saveSubscription(Subscription(subscriptionID: "q", kind: .query, recordType: "T")))
        XCTAssertThrowsError(try priv.saveSubscription(Subscription(subscriptionID: "z", kind: .zone, zoneName: "_defaultZone")))
        XCTAssertThrowsError(try priv.saveSubscription(Subscription(subscriptionID: "z", kind: .zone, zoneName: "Missing"))) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .zoneNotFound)
        }
        XCTAssertThrowsError(try priv.saveSubscription(Subscription(subscriptionID: "../x", kind: .database)))
        XCTAssertThrowsError(try priv.saveSubscription(Subscription(subscriptionID: "q", kind: .query, recordType: "T", firesOn: [])))
        XCTAssertNoThrow(try pub.saveSubscription(Subscription(subscriptionID: "q", kind: .query, recordType: "T")))
        XCTAssertEqual(try priv.subscriptionIDs().count, 0)
    }

    func testOtherDevicesAreNotifiedAndUnreadZoneNotificationsCoalesce() throws {
        let t = TempStore()
        let a = device(t, "A"), b = device(t, "B")
        try a.createZone("Z")
        try a.saveSubscription(Subscription(subscriptionID: "zone-Z", kind: .zone, zoneName: "Z"))
        try b.registerForNotifications()
        _ = try b.modify(zone: "Z", operations: [op(.create, "r1")])
        _ = try b.modify(zone: "Z", operations: [op(.create, "r2")])
        XCTAssertEqual(try b.unread().count, 0, "the device that made the change is left out")
        let notes = try a.unread()
        XCTAssertEqual(notes.count, 1, "two unread zone notifications coalesce into one")
        XCTAssertEqual(notes[0]["notificationType"], "recordZone")
        XCTAssertEqual(notes[0]["zoneID"]?["zoneName"], "Z")
        try a.markRead()
        XCTAssertEqual(try a.unread().count, 0)
        _ = try b.modify(zone: "Z", operations: [op(.forceDelete, "r1")])
        XCTAssertEqual(try a.unread().count, 1, "after reading, the next change notifies again")
    }

    func testQuerySubscriptionsHonourFiresOnPredicateAndFiresOnce() throws {
        let t = TempStore()
        let a = device(t, "A"), b = device(t, "B")
        let f = QueryFilter(fieldName: "n", comparator: .greaterThan, value: field(2)!)
        try a.saveSubscription(Subscription(subscriptionID: "big", kind: .query, recordType: "Item", filters: [f], firesOn: [.create, .delete]))
        try a.saveSubscription(Subscription(subscriptionID: "once", kind: .query, recordType: "Item", firesOnce: true))
        _ = try b.modify(zone: "_defaultZone", operations: [op(.create, "small", ["n": 1]), op(.create, "large", ["n": 5])])
        _ = try b.modify(zone: "_defaultZone", operations: [op(.forceUpdate, "large", ["n": 6])])
        _ = try b.modify(zone: "_defaultZone", operations: [op(.forceDelete, "large")])
        let notes = try a.unread()
        let big = notes.filter { $0["subscriptionID"] == "big" }
        XCTAssertEqual(big.map { $0["recordName"] }, ["large", "large"])
        XCTAssertEqual(big.map { $0["queryNotificationReason"] }, ["recordCreated", "recordDeleted"])
        XCTAssertEqual(notes.filter { $0["subscriptionID"] == "once" }.count, 1)
        XCTAssertEqual(try a.subscriptionIDs(), ["big"], "a fires-once subscription is gone after firing")
    }

    func testPublicQuerySubscriptionsNotifyTheirOwnerOnly() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = t.client(caller(.public, .appleID("bob@example.com")))
        let alice = t.client(caller(.public, .appleID("alice@example.com")))
        try bob.saveSubscription(Subscription(subscriptionID: "notes", kind: .query, recordType: "Note"))
        try alice.registerForNotifications()
        _ = try alice.modify(zone: "_defaultZone", operations: [op(.create, "n1", type: "Note")])
        XCTAssertEqual(try bob.unread().map { $0["recordName"] }, ["n1"], "bob's device gets alice's change")
        XCTAssertEqual(try alice.unread().count, 0)
    }

    func testDatabaseSubscriptionsIgnoreTheDefaultZoneAndSeeZoneDeletion() throws {
        let t = TempStore()
        let a = device(t, "A"), b = device(t, "B")
        try a.saveSubscription(Subscription(subscriptionID: "db", kind: .database))
        _ = try b.modify(zone: "_defaultZone", operations: [op(.create, "x")])
        XCTAssertEqual(try a.unread().count, 0)
        try b.createZone("Z")
        XCTAssertEqual(try a.unread().map { $0["notificationType"] }, ["database"])
    }

    /// A zone event redone after a crash (the same database-history entry) notifies once.
    func testAZoneEventDeliveredTwiceArrivesOnce() throws {
        let t = TempStore()
        let phone = device(t, "phone")
        try phone.saveSubscription(Subscription(subscriptionID: "database", kind: .database))
        try device(t, "laptop").createZone("V")
        XCTAssertEqual(try phone.unread().count, 1)
        try phone.markRead()
        // The redo of the zone event's delivery, as the next writer after a crash does it.
        let laptop = try t.db(device: "laptop")
        try laptop.notifications.deliverZoneEvent("V", entry: try laptop.databaseHistory.head())
        XCTAssertEqual(try phone.unread().count, 0, "the same entry is not delivered again")
    }

    /// A change committed before a subscription was saved never notifies it, even when its
    /// delivery is redone afterwards (a crashed commit finished by the next writer).
    func testARedoneDeliveryDoesNotReachANewerSubscription() throws {
        let t = TempStore()
        let laptop = device(t, "laptop")
        try laptop.createZone("Z")
        _ = try laptop.modify(zone: "Z", operations: [op(.create, "old")])
        try t.zoneStore("Z").setApplied(0, durable: 0)  // as if the commit's delivery had not happened
        t.advance(1000)
        let phone = device(t, "phone")
        try phone.saveSubscription(Subscription(subscriptionID: "q", kind: .query, recordType: "Item"))
        t.advance(1000)
        _ = try laptop.modify(zone: "Z", operations: [op(.create, "new")])
        XCTAssertEqual(try phone.unread().compactMap { $0["recordName"]?.stringValue }, ["new"])
    }

    /// After a restart of the machine, a zone's files are redone from their last sync, and with
    /// them the delivery of changes an inbox already has; with a change it lacks (its commit
    /// stopped before delivering), only that one is delivered.
    func testADeliveryRedoneFromFurtherBackBringsOnlyWhatTheInboxLacks() throws {
        let t = TempStore()
        let laptop = device(t, "laptop")
        try laptop.createZone("Z")
        let phone = device(t, "phone")
        try phone.saveSubscription(Subscription(subscriptionID: "q", kind: .query, recordType: "Item"))
        t.advance(1000)
        _ = try laptop.modify(zone: "Z", operations: [op(.create, "a")])
        _ = try laptop.modify(zone: "Z", operations: [op(.create, "b")])
        let z = try t.zoneStore("Z")
        // Entry 3 committed, then the machine stopped: no file, no delivery.
        var c = try z.record(named: "a")!
        c.recordName = "c"
        c.recordChangeTag = ChangeTag.tag(for: 3)
        try z.history.append([["seq": 3, "op": "save", "recordName": "c", "record": c.json(), "recordChangeTag": .string(c.recordChangeTag),
                               "timestamp": .int(t.now + 2000), "userRecordName": .string(c.modified.userRecordName), "deviceID": "laptop"]])
        // Restarted: the files are trusted only as far as they were synced (here: nothing).
        try z.setApplied(0, durable: 0)
        _ = try laptop.modify(zone: "Z", operations: [op(.create, "d")])
        XCTAssertEqual(try phone.unread().compactMap { $0["recordName"]?.stringValue }, ["a", "b", "c", "d"], "each change once")
    }

    /// A zone subscription watches its zone only, by the bytes of its name.
    func testAZoneSubscriptionDoesNotFireForAnotherSpellingOfItsZone() throws {
        let t = TempStore()
        let phone = device(t, "phone")
        let laptop = device(t, "laptop")
        try laptop.createZone("Z\u{E9}")
        try laptop.createZone("Ze\u{301}")
        try phone.saveSubscription(Subscription(subscriptionID: "s", kind: .zone, zoneName: "Z\u{E9}"))
        _ = try laptop.modify(zone: "Ze\u{301}", operations: [op(.create, "a")])
        XCTAssertEqual(try phone.unread().filter { $0["notificationType"] == "recordZone" }.count, 0)
        _ = try laptop.modify(zone: "Z\u{E9}", operations: [op(.create, "a")])
        XCTAssertEqual(try phone.unread().filter { $0["notificationType"] == "recordZone" }.count, 1)
    }

    /// Default zone-subscription IDs keep a zone with a type apart from a zone whose name
    /// happens to read the same.
    func testDefaultZoneSubscriptionIDsDoNotCollide() {
        let a = Subscription(subscriptionID: "", kind: .zone, zoneName: "a", recordType: "b").defaultID
        let b = Subscription(subscriptionID: "", kind: .zone, zoneName: "a-b").defaultID
        XCTAssertNotEqual(a, b)
        let long = Subscription(subscriptionID: "", kind: .zone, zoneName: String(repeating: "z", count: 255)).defaultID
        XCTAssertLessThanOrEqual(long.utf8.count, 255)
        XCTAssertNoThrow(try Subscription.validateID(long))
    }
}
