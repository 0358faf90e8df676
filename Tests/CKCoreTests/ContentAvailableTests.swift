import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// `shouldSendContentAvailable` reaches the notification as `contentAvailable: true` (a silent
/// push that wakes the app), for database, zone and query subscriptions; without it the key is
/// absent (issue 30, item 11).
final class ContentAvailableTests: XCTestCase {
    func testEveryKindOfSubscriptionCarriesContentAvailableWhenAsked() throws {
        for silent in [true, false] {
            let t = TempStore()
            let writer = t.client(caller(device: "phone")), reader = t.client(caller(device: "mac"))
            try writer.createZone("Z")
            try reader.saveSubscription(Subscription(subscriptionID: "db", kind: .database, shouldSendContentAvailable: silent))
            try reader.saveSubscription(Subscription(subscriptionID: "zone", kind: .zone, zoneName: "Z", shouldSendContentAvailable: silent))
            try reader.saveSubscription(Subscription(subscriptionID: "query", kind: .query, zoneName: "Z", recordType: "Item", shouldSendContentAvailable: silent))
            t.advance(1000)
            _ = try writer.modify(zone: "Z", operations: [op(.create, "r1")])
            let notes = try reader.unread()
            XCTAssertEqual(Set(notes.compactMap { $0["subscriptionID"]?.stringValue }), ["db", "zone", "query"], "\(notes)")
            for n in notes {
                XCTAssertEqual(n["contentAvailable"]?.boolValue, silent ? true : nil, "\(n)")
            }
        }
    }
}
