import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// A record that enters or leaves a share carries its whole subtree, in the participant's zone
/// feed and in their notifications (issue 30, item 2): re-parenting a folder with children
/// under a shared list brings the children to bob; moving it out again deletes them from his
/// replica.
final class SharedSubtreeFeedTests: XCTestCase {
    /// alice's zone Lists: `list`, shared with bob (accepted), holding `milk`; a folder of her
    /// own, `folder`, with `c1` (and its child `g1`) and `c2`, outside the share.
    private func world(_ t: TempStore) throws -> (alice: APIClient, bob: APIClient) {
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let alice = t.client(caller(.private, .appleID("alice@example.com"), device: "alicephone"))
        try alice.createZone("Lists")
        try alice.modify(zone: "Lists", operations: [op(.create, "list", type: "List"), op(.create, "folder", type: "Folder")])
        try alice.modify(zone: "Lists", operations: [child("milk", of: "list"), child("c1", of: "folder"), child("c2", of: "folder")])
        try alice.modify(zone: "Lists", operations: [child("g1", of: "c1")])
        let share = try alice.createShare(zone: "Lists", record: "list", participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)])
        let bob = t.client(caller(.shared, .appleID("bob@example.com"), device: "bobphone"))
        try bob.acceptShare(share.shortGUID)
        return (alice, bob)
    }

    private func child(_ name: String, of parent: String, type: RecordOperationType = .create) -> RecordOperation {
        var o = op(type, name, type: "Item", ["n": 1])
        o.parent = parent
        return o
    }

    private func move(_ alice: APIClient, _ name: String, to parent: String?) throws {
        // forceUpdate keeps a parent it is not given; forceReplace (with the folder's no fields) clears it.
        var o = op(parent == nil ? .forceReplace : .forceUpdate, name, type: "Folder")
        o.parent = parent
        XCTAssertNil(try alice.modify(zone: "Lists", operations: [o])[0].error)
    }

    /// What bob may see now: the records his shared database lists.
    private func visible(_ t: TempStore) throws -> Set<String> {
        Set(try bob(t).records(zone: "Lists").keys)
    }

    /// bob on his phone, in his shared database.
    private func bob(_ t: TempStore) -> APIClient { t.client(caller(.shared, .appleID("bob@example.com"), device: "bobphone")) }

    /// Catches up page by page, each page a request of its own; a page holds at most `limit`
    /// changes unless one record's subtree alone is larger, which then comes whole on a page
    /// of its own.
    private func catchUp(_ replica: inout FeedReplica, _ t: TempStore, limit: Int) throws {
        while true {
            let page = try bob(t).zoneChanges(zone: "Lists", since: replica.token, limit: limit)
            replica.apply(page)
            if !page.moreComing { return }
        }
    }

    func testAFolderMovedIntoTheShareBringsItsChildrenAndMovedOutTakesThemAway() throws {
        let t = TempStore()
        let (alice, _) = try world(t)
        var replica = FeedReplica()
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.records.keys), ["list", "milk", try shareName(alice)])

        try move(alice, "folder", to: "list")
        let before = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[before...].flatMap { $0 }), ["folder", "c1", "c2", "g1"])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))

        try move(alice, "folder", to: nil)
        let after = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[after...].flatMap { $0 }), ["-folder", "-c1", "-c2", "-g1"])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))
        XCTAssertEqual(Set(replica.records.keys), ["list", "milk", try shareName(alice)])
    }

    func testAMoveWhileAFetchFromScratchPagesIsCarriedToo() throws {
        for parent in ["list", nil] {
            let t = TempStore()
            let (alice, _) = try world(t)
            if parent == nil { try move(alice, "folder", to: "list") }
            var replica = FeedReplica()
            replica.apply(try bob(t).zoneChanges(zone: "Lists", since: nil, limit: 2))
            try move(alice, "folder", to: parent)
            try catchUp(&replica, t, limit: 2)
            XCTAssertEqual(Set(replica.records.keys), try visible(t), "moved to \(parent ?? "no parent") while bob paged from scratch")
        }
    }

    func testTheParticipantsDatabaseFeedListsTheZoneForEitherMove() throws {
        let t = TempStore()
        let (alice, _) = try world(t)
        var token = try bob(t).databaseChanges(since: nil).syncToken
        for parent in ["list", nil] {
            try move(alice, "folder", to: parent)
            let page = try bob(t).databaseChanges(since: token)
            XCTAssertEqual(page.zones.map { "\($0.zoneID.zoneName) \($0.deleted)" }, ["Lists false"], "moved to \(parent ?? "no parent")")
            token = page.syncToken
        }
    }

    func testAChildChangedSinceTheTokenComesOnceAndADeletedParentTakesItsChildrenAway() throws {
        let t = TempStore()
        let (alice, _) = try world(t)
        var replica = FeedReplica()
        try catchUp(&replica, t, limit: 200)
        // c2 changes after the move: it comes by its own change, once.
        try move(alice, "folder", to: "list")
        XCTAssertNil(try alice.modify(zone: "Lists", operations: [child("c2", of: "folder", type: .forceUpdate)])[0].error)
        let before = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        let got = replica.pages[before...].flatMap { $0 }
        XCTAssertEqual(got.sorted(), ["c1", "c2", "folder", "g1"])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))

        // Deleting the folder (a parent never cascades) leaves its children outside the share.
        XCTAssertNil(try alice.modify(zone: "Lists", operations: [op(.forceDelete, "folder")])[0].error)
        let after = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[after...].flatMap { $0 }), ["-folder", "-c1", "-c2", "-g1"])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))
    }

    func testSmallPagesEndBeforeASubtreeRatherThanSplitIt() throws {
        let t = TempStore()
        let (alice, _) = try world(t)
        var replica = FeedReplica()
        try catchUp(&replica, t, limit: 200)
        XCTAssertNil(try alice.modify(zone: "Lists", operations: [child("milk", of: "list", type: .forceUpdate)])[0].error)
        try move(alice, "folder", to: "list")
        XCTAssertNil(try alice.modify(zone: "Lists", operations: [op(.create, "eggs", type: "Item")].map { var o = $0; o.parent = "list"; return o })[0].error)
        let before = replica.pages.count
        try catchUp(&replica, t, limit: 2)
        let pages = Array(replica.pages[before...]).filter { !$0.isEmpty }
        // milk; then the folder whole (4 > 2, alone); then eggs.
        XCTAssertEqual(pages.map { Set($0) }, [["milk"], ["folder", "c1", "c2", "g1"], ["eggs"]])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))
    }

    func testASecondShareOfTheZoneAcceptedOrLeftCarriesItsRootsSubtree() throws {
        let t = TempStore()
        let (alice, _) = try world(t)
        var replica = FeedReplica()
        try catchUp(&replica, t, limit: 200)
        let share = try alice.createShare(zone: "Lists", record: "folder", participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readOnly)])
        try bob(t).acceptShare(share.shortGUID)
        let before = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[before...].flatMap { $0 }), ["folder", "c1", "c2", "g1", share.recordName])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))

        try bob(t).leaveShare(share.shortGUID)
        let after = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[after...].flatMap { $0 }), ["-folder", "-c1", "-c2", "-g1", "-" + share.recordName])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))
    }

    func testTheParticipantsZoneSubscriptionOfTheChildrensTypeFiresOnBothMoves() throws {
        let t = TempStore()
        let (alice, bob) = try world(t)
        try bob.saveSubscription(Subscription(subscriptionID: "items", kind: .zone, zoneName: "Lists", recordType: "Item"))
        func unread() throws -> Int { try bob.unread().count }
        let start = try unread()
        try move(alice, "folder", to: "list")
        XCTAssertGreaterThan(try unread(), start, "Items entered bob's share with their folder")
        // Notifications of one subscription coalesce: a second one hears of the way out.
        try bob.saveSubscription(Subscription(subscriptionID: "items-out", kind: .zone, zoneName: "Lists", recordType: "Item"))
        let entered = try unread()
        try move(alice, "folder", to: nil)
        XCTAssertGreaterThan(try unread(), entered, "Items left bob's share with their folder")
    }

    private func shareName(_ alice: APIClient) throws -> String {
        try XCTUnwrap(try alice.lookup(zone: "Lists", recordNames: ["list"])[0].record?.share)
    }
}
