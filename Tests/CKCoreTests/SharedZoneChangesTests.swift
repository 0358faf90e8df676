import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// A participant's zone feed in the shared database follows the paging rules of every feed
/// (each record once, at its current state, on the page of its latest change; from scratch, a
/// deletion only for the device that created the record) and shows nothing but what is shared.
final class SharedZoneChangesTests: XCTestCase {
    /// alice's zone Lists: a list with milk, eggs and bread in it, her diary outside it; the
    /// list shared with bob, who accepted. Returns alice's and bob's (shared) databases.
    private func sharedList(_ t: TempStore) throws -> (alice: APIClient, bob: APIClient) {
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let alice = t.client(caller(.private, .appleID("alice@example.com"), device: "alicephone"))
        try alice.createZone("Lists")
        try alice.modify(zone: "Lists", operations: [op(.create, "list"), op(.create, "diary", ["text": "private"])])
        try alice.modify(zone: "Lists", operations: ["milk", "eggs", "bread"].map { item($0) })
        let share = try alice.createShare(zone: "Lists", record: "list", participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)])
        let bob = t.client(caller(.shared, device: "bobphone"))
        try bob.acceptShare(share.shortGUID)
        return (alice, bob)
    }

    /// A record in the list.
    private func item(_ name: String, _ fields: [String: JSONValue] = [:], type: RecordOperationType = .create) -> RecordOperation {
        var o = op(type, name, fields)
        o.parent = "list"
        return o
    }

    func testAParticipantPagesThroughWhatIsSharedEachOnceAtItsCurrentState() throws {
        let t = TempStore()
        let (alice, bob) = try sharedList(t)
        for v in 1...3 { _ = try alice.modify(zone: "Lists", operations: [item("milk", ["n": .int(Int64(v))], type: .forceUpdate)]) }
        var replica = FeedReplica()
        try replica.catchUp(bob, zone: "Lists", limit: 2)
        let shared = Set(try alice.records(zone: "Lists").keys).subtracting(["diary"])
        XCTAssertEqual(replica.returned.sorted(), shared.sorted(), "each shared record once, the diary never")
        XCTAssertEqual(replica.records["milk"]?.fields["n"]?.value, 3)

        // Since bob's token: milk changes again, eggs is deleted, bread leaves the list, and the
        // diary changes and goes. bob hears of milk once, and of eggs and bread as tombstones.
        let token = replica.token
        _ = try alice.modify(zone: "Lists", operations: [item("milk", ["n": 4], type: .forceUpdate)])
        _ = try alice.modify(zone: "Lists", operations: [op(.forceDelete, "eggs")])
        _ = try alice.modify(zone: "Lists", operations: [op(.forceReplace, "bread", ["n": 9])])
        _ = try alice.modify(zone: "Lists", operations: [op(.forceUpdate, "diary", ["text": "more"])])
        _ = try alice.modify(zone: "Lists", operations: [item("milk", ["n": 5], type: .forceUpdate), op(.forceDelete, "diary")])
        let before = replica.pages.count
        try replica.catchUp(bob, zone: "Lists", limit: 1)
        XCTAssertEqual(replica.pages[before...].filter { !$0.isEmpty }, [["-eggs"], ["-bread"], ["milk"]])
        XCTAssertEqual(replica.records["milk"]?.fields["n"]?.value, 5)
        XCTAssertEqual(Set(replica.records.keys), Set(try alice.records(zone: "Lists").keys).subtracting(["diary", "bread"]))

        // From scratch, bob did not make eggs (alice did): no word of it, nor of bread.
        var fresh = FeedReplica()
        try fresh.catchUp(bob, zone: "Lists", limit: 2)
        XCTAssertFalse(fresh.returned.contains { $0.hasPrefix("-") }, "\(fresh.returned)")
        XCTAssertEqual(fresh.records, replica.records)
        XCTAssertNotEqual(token, replica.token)
    }

    func testFromScratchAParticipantHearsOfTheDeletionOfWhatHeMadeOnThatDevice() throws {
        let t = TempStore()
        let (alice, bob) = try sharedList(t)
        _ = try bob.modify(zone: "Lists", operations: [item("butter")])
        _ = try alice.modify(zone: "Lists", operations: [op(.forceDelete, "butter")])
        var onPhone = FeedReplica()
        try onPhone.catchUp(bob, zone: "Lists", limit: 200)
        XCTAssertEqual(onPhone.returned.filter { $0.hasPrefix("-") }, ["-butter"])
        var onIPad = FeedReplica()
        try onIPad.catchUp(bob.with(device: "bobipad"), zone: "Lists", limit: 200)
        XCTAssertEqual(onIPad.returned.filter { $0.hasPrefix("-") }, [])
        // alice, on a device called like bob's, made none of it.
        var alicePhone = FeedReplica()
        try alicePhone.catchUp(alice.with(device: "bobphone"), zone: "Lists", limit: 200)
        XCTAssertEqual(alicePhone.returned.filter { $0.hasPrefix("-") }, [])
    }
}
