import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The console's zone counts (`zoneRecordCounts`) pass the permission gate: a count is given
/// only to a caller who may read every record it counts.
extension APIHistoryTests {
    /// Zone name (with its owner in the shared database) → its count, or nil where none is given.
    func counts(_ api: CloudKitAPI, as c: Caller) throws -> [String: Int64?] {
        var out: [String: Int64?] = [:]
        for z in try api.zoneRecordCounts(as: c).document["zones"]?.arrayValue ?? [] {
            out[z["zoneID"]?["zoneName"]?.stringValue ?? "?"] = .some(z["recordCount"]?.int64Value)
        }
        return out
    }

    func testZoneCountsAreGivenOnlyToWhoMayReadEveryRecordCounted() throws {
        let w = try world()
        let alice = caller(.private, .appleID(Self.alice))
        let a = w.t.client(alice)
        // Lists: groceries, eggs, bread, milk, secret, the share of groceries (yolk deleted).
        XCTAssertEqual(try counts(w.api, as: alice)["Lists"], .some(6))
        XCTAssertEqual(try counts(w.api, as: alice)["_defaultZone"], .some(0))
        // A participant of a share of some records: the zone, but not how many records it holds.
        for u in [Self.bob, Self.carol, Self.dave] {
            XCTAssertEqual(try counts(w.api, as: caller(.shared, .appleID(u))), ["Lists": Int64?.none], u)
        }
        // A zone shared whole: its participant may read every record, and so learns the count.
        try a.createZone("Whole")
        XCTAssertNil(try a.modify(zone: "Whole", operations: (0..<3).map { op(.create, "w\($0)") }).first?.error)
        let whole = try a.createShare(zone: "Whole", record: nil, participants: [try .parse(argument: Self.erin)])
        XCTAssertEqual(try counts(w.api, as: caller(.shared, .appleID(Self.erin))), [:], "not accepted yet: no zone")
        _ = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(whole.shortGUID)]), as: caller(.shared, .appleID(Self.erin)))
        // The three records and the zone's share.
        XCTAssertEqual(try counts(w.api, as: caller(.shared, .appleID(Self.erin))), ["Whole": .some(4)])
        XCTAssertEqual(try counts(w.api, as: alice)["Whole"], .some(4))
        // A user's own private database is theirs alone.
        XCTAssertEqual(try counts(w.api, as: caller(.private, .appleID(Self.erin))), ["_defaultZone": .some(0)])
    }

    func testPublicZoneCountsFollowTheSchemasGrantsNotWhichRecordsExist() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: Self.bob, givenName: nil, familyName: nil, phone: nil)
        let schema = SchemaAdmin(paths: t.store.paths, container: testContainer)
        let note = #"RECORD TYPE Note (title STRING, GRANT CREATE TO "_icloud", GRANT WRITE TO "_creator", GRANT READ TO "_world");"#
        try schema.importSchema("DEFINE SCHEMA\n" + note, validateOnly: false)
        let api = api(t.root)
        let pub = { (who: String) in t.client(caller(.public, .appleID(who))) }
        let readers = [caller(.public, .appleID(Self.alice)), caller(.public, .appleID(Self.bob)), caller(.public, .nobody)]
        for c in readers { XCTAssertEqual(try counts(api, as: c), ["_defaultZone": .some(0)], "an empty zone: \(c.user)") }
        XCTAssertNil(try pub(Self.alice).modify(zone: "_defaultZone", operations: [op(.create, "n1", type: "Note", ["title": "hello"]),
                                                                                   op(.create, "n2", type: "Note", ["title": "again"])]).first?.error)
        for c in readers { XCTAssertEqual(try counts(api, as: c), ["_defaultZone": .some(2)], "every record is _world-readable: \(c.user)") }
        // A type only its creators read: from then on a count could tell someone of records
        // hidden from them — so none is given, to anyone, whether such a record exists or not.
        try schema.importSchema("DEFINE SCHEMA\n" + note + "\n" + #"RECORD TYPE Diary (text STRING, GRANT CREATE TO "_icloud", GRANT READ, WRITE TO "_creator");"#, validateOnly: false)
        for c in readers { XCTAssertEqual(try counts(api, as: c), ["_defaultZone": Int64?.none], "no diary yet: \(c.user)") }
        XCTAssertNil(try pub(Self.alice).modify(zone: "_defaultZone", operations: [op(.create, "d1", type: "Diary", ["text": "classified"])]).first?.error)
        for c in readers { XCTAssertEqual(try counts(api, as: c), ["_defaultZone": Int64?.none], "a diary: \(c.user)") }
        // An empty zone under that schema: a dash too, not a 0 that the first record would change.
        let empty = TempStore()
        try SchemaAdmin(paths: empty.store.paths, container: testContainer).importSchema(
            "DEFINE SCHEMA\n" + note + "\n" + #"RECORD TYPE Diary (text STRING, GRANT CREATE TO "_icloud", GRANT READ, WRITE TO "_creator");"#, validateOnly: false)
        XCTAssertEqual(try counts(CKTestSupport.api(empty.root), as: caller(.public, .nobody)), ["_defaultZone": Int64?.none])
    }
}
