import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Two owners sharing zones of the same name with one user (issue 30, item 5). ck addresses a
/// shared zone by its name, so it cannot serve both: the second accept is refused, clearly, and
/// the first share keeps working. (CloudKit keys shared zones by zoneName and ownerRecordName.)
final class SharedZoneNameClashTests: XCTestCase {
    /// alice and erin each share a root of their own zone `Lists` with bob; returns both short GUIDs.
    func twoOwners() throws -> (TempStore, CloudKitAPI, alice: String, erin: String) {
        let t = TempStore(signIn: false)
        for u in ["erin", "bob", "alice"] {
            try t.store.accounts.signIn(appleID: "\(u)@example.com", givenName: u.capitalized, familyName: nil, phone: nil)
        }
        let a = api(t.root)
        var guids: [String] = []
        for owner in ["alice", "erin"] {
            _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller(owner))
            let saved = try a.modifyRecords(ModifyRequest(operations: [op(.create, "\(owner)-list", type: "List", ["title": "x"])], zoneName: "Lists"),
                                            as: caller(owner))
            XCTAssertNil(saved.results[0].error)
            let share = try a.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "\(owner)-list", participants: [
                ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite),
            ]), as: caller(owner))
            guids.append(try XCTUnwrap(share.results.first?.value?["shortGUID"]?.stringValue))
        }
        return (t, a, guids[0], guids[1])
    }

    func bobReadsAlicesList(_ a: CloudKitAPI) throws {
        let got = try a.lookupRecords(LookupRecordsRequest(recordNames: ["alice-list"], zoneName: "Lists"), as: caller("bob", .shared))
        guard case .saved(let r)? = got.results.first else { return XCTFail("bob cannot read alice's list: \(got.results)") }
        XCTAssertEqual(r.recordName, "alice-list")
    }

    func testAcceptingASecondOwnersZoneOfTheSameNameIsRefusedAndTheFirstShareStillServes() throws {
        let (t, a, alice, erin) = try twoOwners()
        XCTAssertNil(try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(alice)]), as: caller("bob")).failures.first)
        try bobReadsAlicesList(a)
        let before = t.snapshot()

        let answer = try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(erin)]), as: caller("bob"))
        let e = try XCTUnwrap(answer.failures.first)
        XCTAssertEqual(e.code, .badRequest)
        XCTAssertTrue(e.reason.contains("'Lists'") && e.reason.contains("alice@example.com"), e.reason)
        XCTAssertEqual(e.nextStep, .leaveShare)
        XCTAssertEqual(t.snapshot(), before, "a refused accept writes nothing")

        try bobReadsAlicesList(a)
        let zones = try a.listZones(as: caller("bob", .shared))
        XCTAssertEqual(zones.results.count, 1)
    }

    func testBothInOneBatchAcceptTheFirstAndRefuseTheSecond() throws {
        let (t, a, alice, erin) = try twoOwners()
        defer { withExtendedLifetime(t) {} }
        let answer = try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(alice), ShortGUIDRequest(erin)]), as: caller("bob"))
        XCTAssertNil(answer.results[0].error)
        XCTAssertEqual(answer.results[1].error?.code, .badRequest)
        try bobReadsAlicesList(a)
    }

    func testAcceptingTheSameShareAgainAndAnotherShareOfTheSameZoneStillWork() throws {
        let (t, a, alice, _) = try twoOwners()
        defer { withExtendedLifetime(t) {} }
        XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [op(.create, "alice-other", type: "List", ["title": "y"])], zoneName: "Lists"),
                                         as: caller("alice")).results[0].error)
        let second = try a.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "alice-other", participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readOnly),
        ]), as: caller("alice"))
        let guid2 = try XCTUnwrap(second.results.first?.value?["shortGUID"]?.stringValue)
        for g in [alice, alice, guid2] {
            XCTAssertNil(try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(g)]), as: caller("bob")).failures.first)
        }
        try bobReadsAlicesList(a)
    }
}
