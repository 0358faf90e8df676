import XCTest
@testable import CKCore
import CKTestSupport

/// A record that enters or leaves a share carries its whole subtree, in the participant's zone
/// feed and in their notifications (issue 30, item 2): re-parenting a folder with children
/// under a shared list brings the children to bob; moving it out again deletes them from his
/// replica.
final class SharedSubtreeFeedTests: XCTestCase {
    /// alice's zone Lists: `list`, shared with bob (accepted), holding `milk`; a folder of her
    /// own, `folder`, with `c1` (and its child `g1`) and `c2`, outside the share.
    private func world(_ t: TempStore) throws -> (alice: Database, bob: Database) {
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let alice = try t.db(device: "alicephone", as: "alice@example.com")
        _ = try alice.createZone("Lists")
        _ = try alice.modify(zone: "Lists", operations: [op(.create, "list", type: "List"), op(.create, "folder", type: "Folder")])
        _ = try alice.modify(zone: "Lists", operations: [child("milk", of: "list"), child("c1", of: "folder"), child("c2", of: "folder")])
        _ = try alice.modify(zone: "Lists", operations: [child("g1", of: "c1")])
        let share = try alice.createShare(zone: "Lists", record: "list", participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)],
                                          publicPermission: .none, title: nil)
        let accept = AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(share.share.shortGUID!)])
        _ = try api(t.root).acceptShares(accept, as: caller(.shared, .appleID("bob@example.com"), device: "bobphone"))
        return (alice, try t.db(.shared, device: "bobphone", as: "bob@example.com"))
    }

    private func child(_ name: String, of parent: String, type: RecordOperationType = .create) -> RecordOperation {
        var o = op(type, name, type: "Item", ["n": 1])
        o.parent = parent
        return o
    }

    private func move(_ alice: Database, _ name: String, to parent: String?) throws {
        // forceUpdate keeps a parent it is not given; forceReplace (with the folder's no fields) clears it.
        var o = op(parent == nil ? .forceReplace : .forceUpdate, name, type: "Folder")
        o.parent = parent
        XCTAssertNil(try alice.modify(zone: "Lists", operations: [o])[0].error)
    }

    /// What bob may see now: the records his shared database lists.
    private func visible(_ t: TempStore) throws -> Set<String> {
        let bob = try t.db(.shared, device: "bobphone", as: "bob@example.com")
        var out = Set<String>()
        try bob.zone("Lists").snapshot().forEachRecord { r in
            if (try? bob.canRead(r)) == true { out.insert(r.recordName) }
            return true
        }
        return out
    }

    /// Catches up page by page, each page a command of its own (a Database reads what is
    /// shared once per command); a page holds at most `limit` changes unless one record's
    /// subtree alone is larger, which then comes whole on a page of its own.
    private func catchUp(_ replica: inout FeedReplica, _ t: TempStore, limit: Int) throws {
        while true {
            let bob = try t.db(.shared, device: "bobphone", as: "bob@example.com")
            let page = try bob.zoneChanges(zone: "Lists", since: replica.token, limit: limit)
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
            let bob = try t.db(.shared, device: "bobphone", as: "bob@example.com")
            replica.apply(try bob.zoneChanges(zone: "Lists", since: nil, limit: 2))
            try move(alice, "folder", to: parent)
            try catchUp(&replica, t, limit: 2)
            XCTAssertEqual(Set(replica.records.keys), try visible(t), "moved to \(parent ?? "no parent") while bob paged from scratch")
        }
    }

    func testTheParticipantsDatabaseFeedListsTheZoneForEitherMove() throws {
        let t = TempStore()
        let (alice, _) = try world(t)
        func bob() throws -> Database { try t.db(.shared, device: "bobphone", as: "bob@example.com") }
        var token = try bob().databaseChanges(since: nil).syncToken
        for parent in ["list", nil] {
            try move(alice, "folder", to: parent)
            let page = try bob().databaseChanges(since: token)
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
        let share = try alice.createShare(zone: "Lists", record: "folder", participants: [ShareParticipantRequest(user: .email("bob@example.com"), permission: .readOnly)],
                                          publicPermission: .none, title: nil)
        let bob = caller(.shared, .appleID("bob@example.com"), device: "bobphone")
        let api = api(t.root)
        _ = try api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(share.share.shortGUID!)]), as: bob)
        let before = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[before...].flatMap { $0 }), ["folder", "c1", "c2", "g1", share.share.recordName])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))

        let shared = try t.db(.shared, device: "bobphone", as: "bob@example.com")
        _ = try shared.updateShare(try shared.share(shortGUID: share.share.shortGUID!), .leave)
        let after = replica.pages.count
        try catchUp(&replica, t, limit: 200)
        XCTAssertEqual(Set(replica.pages[after...].flatMap { $0 }), ["-folder", "-c1", "-c2", "-g1", "-" + share.share.recordName])
        XCTAssertEqual(Set(replica.records.keys), try visible(t))
    }

    func testTheParticipantsZoneSubscriptionOfTheChildrensTypeFiresOnBothMoves() throws {
        let t = TempStore()
        let (alice, bob) = try world(t)
        _ = try bob.saveSubscription(Subscription(subscriptionID: "items", kind: .zone, zoneName: "Lists", recordType: "Item"))
        let phone = try t.db(.shared, device: "bobphone", as: "bob@example.com")
        func unread() throws -> Int {
            let box = try phone.notificationInbox()
            return try box.read(from: try box.unreadOffset()).notifications.count
        }
        let start = try unread()
        try move(alice, "folder", to: "list")
        XCTAssertGreaterThan(try unread(), start, "Items entered bob's share with their folder")
        // Notifications of one subscription coalesce: a second one hears of the way out.
        _ = try bob.saveSubscription(Subscription(subscriptionID: "items-out", kind: .zone, zoneName: "Lists", recordType: "Item"))
        let entered = try unread()
        try move(alice, "folder", to: nil)
        XCTAssertGreaterThan(try unread(), entered, "Items left bob's share with their folder")
    }

    private func shareName(_ alice: Database) throws -> String {
        try XCTUnwrap(try alice.zone("Lists").record(named: "list")?.share)
    }
}
