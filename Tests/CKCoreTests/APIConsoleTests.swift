import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// The API calls the console makes that no other front end does: the navigator's overview, the
/// feed that takes a device's notifications once, and references read without a shell.
final class APIConsoleTests: XCTestCase {
    func testTheOverviewListsContainersWithTheirEnvironmentsUsersAndTheDevice() throws {
        let t = TempStore()
        for (container, env) in [("iCloud.com.example.b", CKModel.Environment.development), ("iCloud.com.example.a", .production), ("iCloud.com.example.a", .development)] {
            var c = caller()
            c.container = container
            c.environment = env
            _ = try t.api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Z")]), as: c)
        }
        // What fsck reports and the navigator leaves out: a name that decodes to no container.
        try FileManager.default.createDirectory(atPath: t.root + "/containers/%ZZ", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: t.root + "/containers/.hidden", withIntermediateDirectories: true)
        _ = try t.api.signIn(SignInRequest(appleID: "bob@example.com"), as: caller())
        _ = try t.api.signIn(SignInRequest(appleID: "alice@example.com"), as: caller())
        let o = try t.api.consoleOverview().jsonValue
        XCTAssertEqual(o["containers"]?.arrayValue?.map { $0["containerIdentifier"]?.stringValue }, ["iCloud.com.example.a", "iCloud.com.example.b"])
        XCTAssertEqual(o["containers"]?.arrayValue?.first?["environments"], ["development", "production"])
        XCTAssertEqual(o["users"]?.arrayValue?.compactMap { $0["appleID"]?.stringValue }, ["alice@example.com", "bob@example.com"])
        XCTAssertEqual(o["device"]?["appleID"]?.stringValue, "alice@example.com")
        XCTAssertEqual(o["device"]?["status"]?.stringValue, "available")
    }

    func testAnEmptyDataDirectoryHasNoContainers() throws {
        let t = TempStore(signIn: false)
        let o = try t.api.consoleOverview().jsonValue
        XCTAssertEqual(o["containers"], [])
        XCTAssertEqual(o["device"]?["status"]?.stringValue, "noAccount")
    }

    func testTheTableFiltersWithTheCLIsFilterTextTypedByTheSchema() throws {
        let t = TempStore()
        let c = caller()
        _ = try t.api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Z")]), as: c)
        let ops = [("a", 1, "2026-01-01T00:00:00Z"), ("b", 2, "2026-06-01T12:00:00Z"), ("c", 3, "2026-12-01T00:00:00Z")].map { n, p, due in
            RecordOperation(type: .create, recordName: n, recordType: "Item",
                            fields: ["priority": RecordField(type: FieldType(.int64), value: .int(Int64(p))),
                                     "due": RecordField(type: FieldType(.timestamp), value: .int(Timestamps.parseISO8601(due)!))])
        }
        _ = try t.api.modifyRecords(ModifyRequest(operations: ops, atomic: true, zoneName: "Z"), as: c)
        for f in ["priority", "due", "___recordID"] {
            _ = try t.api.addSchemaIndexes(SchemaIndexRequest(recordType: "Item", fieldName: f, indexes: [.queryable]), as: c)
        }
        func names(_ filters: [String], tz: String? = nil) throws -> [String] {
            let r = try t.api.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Item"), zoneName: "Z"), filterTexts: filters, timeZoneName: tz, as: c)
            return (r.jsonValue["records"]?.arrayValue ?? []).compactMap { $0["recordName"]?.stringValue }.sorted()
        }
        XCTAssertEqual(try names(["priority >= 2"]), ["b", "c"])
        XCTAssertEqual(try names(["priority>=2", "priority < 3"]), ["b"], "ANDed, as --filter is")
        // A date without an offset is in the zone named: noon in Paris is 11:00 UTC in June.
        XCTAssertEqual(try names(["due == 2026-06-01T12:00"]), ["b"])
        XCTAssertEqual(try names(["due == 2026-06-01T14:00"], tz: "Europe/Paris"), ["b"])
        // The CLI's refusals, as CloudKit's BAD_REQUEST.
        for (bad, says) in [("priority >= two", "not a 64-bit integer"), ("priority", "FIELD OP VALUE"), ("a > 1 AND b == 2", "give each its own --filter"),
                            ("title LIKE x", "NSPredicate")] {
            XCTAssertThrowsError(try names([bad])) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, bad)
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(says) == true, "\(bad): \(e)")
            }
        }
        XCTAssertEqual(try names(["due == 2026-06-01T12:00"], tz: "Mars/Olympus"), ["b"], "a zone unknown here is UTC")
        XCTAssertThrowsError(try names(Array(repeating: "priority >= 1", count: 21))) { XCTAssertTrue("\($0)".contains("at most 20"), "\($0)") }
    }

    func testTheConsoleFeedTakesEachNotificationOnceFromItsFirstRead() throws {
        let t = TempStore()
        let phone = t.client(caller(device: "phone"))
        try phone.createZone("Z")
        try phone.saveSubscription(Subscription(subscriptionID: "zone-Z", kind: .zone, zoneName: "Z"))
        _ = try phone.modify(zone: "Z", operations: [op(.create, "before")])
        let console = Caller.console(container: caller().container, environment: .development, scope: .private, appleID: nil)
        XCTAssertEqual(try t.api.takeNotifications(limit: 10, as: console).notifications.count, 0, "registered by its first read: nothing from before")
        _ = try phone.modify(zone: "Z", operations: [op(.create, "after")])
        let notes = try t.api.takeNotifications(limit: 10, as: console).notifications
        XCTAssertEqual(notes.map { $0["subscriptionID"]?.stringValue }, ["zone-Z"])
        XCTAssertEqual(try t.api.takeNotifications(limit: 10, as: console).notifications.count, 0, "taken once")
        // The console's own writes never notify the console, as a device's never notify it.
        _ = try t.api.modifyRecords(ModifyRequest(operations: [op(.create, "own")], atomic: true, zoneName: "Z"), as: console)
        XCTAssertEqual(try t.api.takeNotifications(limit: 10, as: console).notifications.count, 0)
    }

    func testReferencesAreReadWithTheAPIsClock() throws {
        let t = TempStore()
        XCTAssertEqual(try t.api.historyReference("Lists@3"), .seq(zone: "Lists", 3))
        XCTAssertEqual(try t.api.historyReference("1h ago"), .time(t.now - 3_600_000))
        XCTAssertThrowsError(try t.api.historyReference(""))
    }
}
