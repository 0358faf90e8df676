import CKTestSupport
import Foundation
import XCTest

/// Sharing through the command line (issue 16, Docs/sharing.md): alice, bob and carol, each on
/// their own device of one data directory, share a list; the shared database, its change feeds
/// and its subscriptions; zone-wide and public shares; `record modify` with a Web Services share
/// create.
final class SharingTests: XCTestCase {
    static let alice = "alice@example.com", bob = "bob@example.com", carol = "carol@example.com"

    /// Everyone has signed in once (so they can be invited); the device is alice's.
    func sandbox() -> CLISandbox {
        let s = CLISandbox()
        for u in [Self.carol, Self.bob, Self.alice] { s.signIn(u) }
        return s
    }

    /// Runs a command as a user on their own device.
    @discardableResult
    func run(_ s: CLISandbox, _ user: String, _ args: String..., stdin: String? = nil) -> CKResult {
        let device = String(user.prefix { $0 != "@" }) + "-phone"
        return s.run(["--as", user, "--device", device] + args, stdin: stdin)
    }

    func ok(_ r: CKResult, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
    }

    func userRecordName(_ s: CLISandbox, _ user: String) -> String {
        run(s, user, "whoami").object["userRecordName"] as? String ?? "?"
    }

    /// alice's zone Lists: the list `groceries` with the item `milk`, and her own `diary`.
    func makeList(_ s: CLISandbox) {
        ok(run(s, Self.alice, "zone", "create", "Lists"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "List", "--name", "groceries", "title=Groceries"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "milk", "--parent", "groceries", "title=Milk"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Note", "--name", "diary", "text=private"))
        // The container's schema lets a query of Item without a filter run (as in CloudKit, it needs the index).
        ok(run(s, Self.alice, "schema", "index", "add", "Item", "___recordID", "QUERYABLE"))
    }

    /// Shares groceries with bob (readWrite) and carol (readOnly); returns the share record.
    func shareList(_ s: CLISandbox) -> [String: Any] {
        let r = run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries",
                    "--participant", "\(Self.bob):readWrite", "--participant", "\(Self.carol):readOnly", "--title", "Groceries")
        ok(r)
        return r.record
    }

    func deletedFlags(_ r: CKResult) -> [String: Bool] {
        var out: [String: Bool] = [:]
        for z in r.object["zones"] as? [[String: Any]] ?? [] {
            if let id = z["zoneID"] as? [String: Any], let n = id["zoneName"] as? String { out[n] = z["deleted"] as? Bool }
        }
        return out
    }

    // MARK: the story of Docs/sharing.md

    func testAliceSharesAListWithBobAndCarol() {
        let s = sandbox()
        makeList(s)
        let aliceID = userRecordName(s, Self.alice)
        let share = shareList(s)
        let shareName = share["recordName"] as? String ?? ""
        let guid = share["shortGUID"] as? String ?? ""
        XCTAssertEqual(share["recordType"] as? String, "cloudkit.share")
        XCTAssertEqual(share["publicPermission"] as? String, "NONE")
        XCTAssertFalse(guid.isEmpty)
        let participants = share["participants"] as? [[String: Any]] ?? []
        XCTAssertEqual(participants.map { $0["type"] as? String }, ["OWNER", "USER", "USER"])
        XCTAssertEqual(participants.map { $0["permission"] as? String }, ["READ_WRITE", "READ_WRITE", "READ_ONLY"])
        XCTAssertEqual(participants.map { $0["acceptanceStatus"] as? String }, ["ACCEPTED", "INVITED", "INVITED"])
        XCTAssertEqual(participants.map { ($0["userIdentity"] as? [String: Any])?["lookupInfo"] as? [String: String] },
                       [["emailAddress": Self.alice], ["emailAddress": Self.bob], ["emailAddress": Self.carol]])
        XCTAssertEqual((share["owner"] as? [String: Any])?["type"] as? String, "OWNER")
        XCTAssertEqual((share["fields"] as? [String: Any])?["cloudkit.title"] as? [String: String], ["type": "STRING", "value": "Groceries"])
        // The root points at its share and carries the same short GUID.
        let root = run(s, Self.alice, "--zone", "Lists", "record", "get", "groceries").record
        XCTAssertEqual(root["share"] as? [String: String], ["recordName": shareName])
        XCTAssertEqual(root["shortGUID"] as? String, guid)

        // Before accepting: an invitation, and an empty shared database.
        let invitations = run(s, Self.bob, "--db", "shared", "share", "list")
        XCTAssertEqual(names(invitations), [shareName])
        XCTAssertEqual(((invitations.record["currentUserParticipant"] as? [String: Any])?["acceptanceStatus"]) as? String, "INVITED")
        XCTAssertEqual((run(s, Self.bob, "--db", "shared", "zone", "list").object["zones"] as? [Any])?.count, 0)

        let accepted = run(s, Self.bob, "share", "accept", guid)
        ok(accepted)
        let result = (accepted.object["results"] as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(result["participantStatus"] as? String, "ACCEPTED")
        XCTAssertEqual(result["participantPermission"] as? String, "READ_WRITE")
        XCTAssertEqual(result["rootRecordName"] as? String, "groceries")
        XCTAssertEqual((result["zoneID"] as? [String: String])?["ownerRecordName"], aliceID)
        ok(run(s, Self.carol, "share", "accept", "https://www.icloud.com/share/\(guid)"))

        // The shared database lists alice's zone, with her as its owner.
        let zones = run(s, Self.bob, "--db", "shared", "zone", "list").object["zones"] as? [[String: Any]] ?? []
        XCTAssertEqual(zones.count, 1)
        XCTAssertEqual(zones.first?["zoneID"] as? [String: String], ["zoneName": "Lists", "ownerRecordName": aliceID, "zoneType": "REGULAR_CUSTOM_ZONE"])

        // Each sees the shared hierarchy (and the share), never alice's diary.
        for user in [Self.bob, Self.carol] {
            let changes = run(s, user, "--db", "shared", "--zone", "Lists", "zone", "changes")
            ok(changes)
            XCTAssertEqual(Set(names(changes)), ["groceries", "milk", shareName], user)
            XCTAssertEqual(Set(names(run(s, user, "--db", "shared", "--zone", "Lists", "record", "list"))), ["groceries", "milk", shareName], user)
            XCTAssertEqual(names(run(s, user, "--db", "shared", "--zone", "Lists", "record", "query", "--type", "Item")), ["milk"], user)
            assertFailure(run(s, user, "--db", "shared", "--zone", "Lists", "record", "get", "diary"), exit: 3, contains: "NOT_FOUND")
            ok(run(s, user, "--db", "shared", "database", "changes"))
        }

        // bob adds an item under the list; carol's write is refused.
        let eggs = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "eggs", "--parent", "groceries", "title=Eggs")
        ok(eggs)
        XCTAssertEqual((eggs.record["modified"] as? [String: Any])?["userRecordName"] as? String, userRecordName(s, Self.bob))
        s.assertUnchanged("carol is read-only") {
            assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "cake", "--parent", "groceries", "title=Cake"),
                          exit: 5, contains: "ACCESS_DENIED")
            assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "save", "--name", "milk", "--force", "title=Oat"),
                          exit: 5, contains: "READ_ONLY")
        }

        // alice sees bob's item in her own feeds; she edits the list and adds to it.
        let aliceFeed = run(s, Self.alice, "--zone", "Lists", "zone", "changes", "--from-start", "--no-save")
        XCTAssertTrue(names(aliceFeed).contains("eggs"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "milk", "--force", "title=Oat milk"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "bread", "--parent", "groceries", "title=Bread"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "diary", "--force", "text=still private"))
        for user in [Self.bob, Self.carol] {
            let changes = run(s, user, "--db", "shared", "--zone", "Lists", "zone", "changes")
            ok(changes)
            XCTAssertEqual(Set(names(changes)), ["eggs", "milk", "bread"], user)
            let milk = (changes.zoneChanges["records"] as? [[String: Any]] ?? []).first { $0["recordName"] as? String == "milk" }
            XCTAssertEqual(((milk?["fields"] as? [String: Any])?["title"] as? [String: Any])?["value"] as? String, "Oat milk")
            XCTAssertEqual(deletedFlags(run(s, user, "--db", "shared", "database", "changes")), ["Lists": false], user)
        }

        // alice removes carol: her shared database reports the zone deleted, and shows nothing.
        let removed = run(s, Self.alice, "--zone", "Lists", "share", "remove-participant", "groceries", Self.carol)
        ok(removed)
        let statuses = (removed.record["participants"] as? [[String: Any]] ?? []).map { $0["acceptanceStatus"] as? String }
        XCTAssertEqual(statuses, ["ACCEPTED", "ACCEPTED", "REMOVED"])
        XCTAssertEqual(deletedFlags(run(s, Self.carol, "--db", "shared", "database", "changes")), ["Lists": true])
        XCTAssertEqual((run(s, Self.carol, "--db", "shared", "zone", "list").object["zones"] as? [Any])?.count, 0)
        assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "zone", "changes"), exit: 3, contains: "ZONE_NOT_FOUND")
        assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "get", "milk"), exit: 3)
        // bob is still in.
        ok(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "get", "milk"))
    }

    /// A participant's feed in the shared database: a record that leaves the share is a
    /// tombstone; changes to the owner's other records never show up, not even in
    /// `database changes`.
    func testSharedFeedsShowOnlyWhatIsShared() {
        let s = sandbox()
        makeList(s)
        let guid = shareList(s)["shortGUID"] as? String ?? ""
        ok(run(s, Self.bob, "share", "accept", guid))
        ok(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "zone", "changes"))
        ok(run(s, Self.bob, "--db", "shared", "database", "changes"))
        // alice's private records change: nothing for bob.
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "diary", "--force", "text=again"))
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Note", "--name", "todo", "text=mine"))
        let quiet = run(s, Self.bob, "--db", "shared", "database", "changes")
        XCTAssertEqual(deletedFlags(quiet), [:], "a change to records that are not shared is not a change of the shared zone")
        XCTAssertEqual(names(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "zone", "changes")), [])
        // milk moves out of the hierarchy (no parent), then is deleted: bob sees it go once.
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "milk", "--force", "--replace", "title=Milk"))
        let moved = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "zone", "changes")
        let records = moved.zoneChanges["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(records.first?["recordName"] as? String, "milk")
        XCTAssertEqual(records.first?["deleted"] as? Bool, true)
        XCTAssertNil(records.first?["fields"])
        XCTAssertEqual(deletedFlags(run(s, Self.bob, "--db", "shared", "database", "changes")), ["Lists": false])
        ok(run(s, Self.alice, "--zone", "Lists", "record", "delete", "milk", "--force"))
        XCTAssertEqual(names(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "zone", "changes")), [])
    }

    func testLeavingAndDeletingTheShare() {
        let s = sandbox()
        makeList(s)
        let share = shareList(s)
        let guid = share["shortGUID"] as? String ?? ""
        ok(run(s, Self.bob, "share", "accept", guid))
        ok(run(s, Self.carol, "share", "accept", guid))
        for u in [Self.bob, Self.carol] { ok(run(s, u, "--db", "shared", "database", "changes")) }

        let left = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "share", "leave", "groceries")
        ok(left)
        XCTAssertEqual(((left.record["currentUserParticipant"] as? [String: Any])?["acceptanceStatus"]) as? String, "REMOVED")
        XCTAssertEqual(deletedFlags(run(s, Self.bob, "--db", "shared", "database", "changes")), ["Lists": true])
        XCTAssertEqual(deletedFlags(run(s, Self.carol, "--db", "shared", "database", "changes")), ["Lists": false], "the share record changed")

        let deleted = run(s, Self.alice, "--zone", "Lists", "share", "delete", "groceries")
        ok(deleted)
        XCTAssertEqual(deleted.record["deleted"] as? Bool, true)
        XCTAssertEqual(deletedFlags(run(s, Self.carol, "--db", "shared", "database", "changes")), ["Lists": true])
        // The records stay in alice's zone; the root no longer points at a share.
        let root = run(s, Self.alice, "--zone", "Lists", "record", "get", "groceries").record
        XCTAssertNil(root["share"])
        XCTAssertEqual(Set(names(run(s, Self.alice, "--zone", "Lists", "record", "list"))), ["groceries", "milk", "diary"])
        XCTAssertEqual(names(run(s, Self.alice, "share", "list")), [])
        assertFailure(run(s, Self.carol, "share", "accept", guid), exit: 3, contains: "NOT_FOUND")
        // The root can be shared again.
        ok(run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries"))
    }

    func testZoneWideShareOfAnotherZone() {
        let s = sandbox()
        makeList(s)
        _ = shareList(s)
        ok(run(s, Self.alice, "zone", "create", "Board"))
        ok(run(s, Self.alice, "--zone", "Board", "record", "save", "--type", "Card", "--name", "a", "t=A"))
        ok(run(s, Self.alice, "--zone", "Board", "record", "save", "--type", "Card", "--name", "b", "t=B"))
        let share = run(s, Self.alice, "--zone", "Board", "share", "create", "--zone-wide", "--participant", "\(Self.bob):readOnly", "--participant", "\(Self.carol):readWrite")
        ok(share)
        XCTAssertEqual(share.record["recordName"] as? String, "cloudkit.zoneshare")
        let guid = share.record["shortGUID"] as? String ?? ""
        ok(run(s, Self.bob, "share", "accept", guid))
        ok(run(s, Self.carol, "share", "accept", guid))
        // bob sees only Board (he has not accepted the Lists share).
        let zones = (run(s, Self.bob, "--db", "shared", "zone", "list").object["zones"] as? [[String: Any]] ?? []).map { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        XCTAssertEqual(zones, ["Board"])
        ok(run(s, Self.alice, "--zone", "Board", "record", "save", "--type", "Card", "--name", "c", "t=C"))
        XCTAssertEqual(Set(names(run(s, Self.bob, "--db", "shared", "--zone", "Board", "record", "list"))), ["a", "b", "c", "cloudkit.zoneshare"])
        // Under a zone-wide share a readWrite participant writes anywhere in the zone, with no parent.
        ok(run(s, Self.carol, "--db", "shared", "--zone", "Board", "record", "save", "--type", "Card", "--name", "d", "t=D"))
        s.assertUnchanged("bob is read-only") {
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Board", "record", "save", "--type", "Card", "--name", "e", "t=E"), exit: 5, contains: "READ_ONLY")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Board", "record", "delete", "a", "--force"), exit: 5, contains: "ACCESS_DENIED")
        }
        XCTAssertTrue(names(run(s, Self.alice, "--zone", "Board", "zone", "changes", "--from-start", "--no-save")).contains("d"))
    }

    func testPublicPermissionLetsAnySignedInUserAccept() {
        let s = sandbox()
        makeList(s)
        let share = run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries", "--public-permission", "readOnly")
        ok(share)
        XCTAssertEqual(share.record["publicPermission"] as? String, "READ_ONLY")
        let accepted = run(s, Self.carol, "share", "accept", share.record["shortGUID"] as? String ?? "")
        ok(accepted)
        let result = (accepted.object["results"] as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(result["participantType"] as? String, "PUBLIC_USER")
        XCTAssertEqual(result["participantPermission"] as? String, "READ_ONLY")
        XCTAssertEqual(Set(names(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "list"))).subtracting([share.record["recordName"] as? String ?? ""]), ["groceries", "milk"])
        // bob did not accept: he sees nothing.
        XCTAssertEqual((run(s, Self.bob, "--db", "shared", "zone", "list").object["zones"] as? [Any])?.count, 0)
    }

    func testSharedDatabaseSubscriptionsNotifyTheParticipantsDevices() {
        let s = sandbox()
        makeList(s)
        let guid = shareList(s)["shortGUID"] as? String ?? ""
        ok(run(s, Self.bob, "share", "accept", guid))
        // bob's phone watches his shared database; his laptop registers too; alice watches her zone.
        ok(run(s, Self.bob, "--db", "shared", "subscribe", "--id", "shared-db"))
        ok(s.run(["--as", Self.bob, "--device", "bob-laptop", "--db", "shared", "subscribe", "zone", "--zone", "Lists", "--id", "lists"]))
        ok(run(s, Self.alice, "--zone", "Lists", "subscribe", "zone", "--zone", "Lists", "--id", "mine"))

        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "bread", "--parent", "groceries", "title=Bread"))
        func notes(_ device: String, markRead: Bool = true) -> [[String: Any]] {
            s.run(["--as", Self.bob, "--device", device, "notifications"] + (markRead ? ["--mark-read"] : [])).object["notifications"] as? [[String: Any]] ?? []
        }
        let phone = notes("bob-phone")
        XCTAssertTrue(phone.contains { $0["subscriptionID"] as? String == "shared-db" && $0["databaseScope"] as? String == "shared" && $0["notificationType"] as? String == "database" }, "\(phone)")
        XCTAssertTrue(phone.contains { $0["subscriptionID"] as? String == "lists" && (($0["zoneID"] as? [String: Any])?["ownerRecordName"] as? String) == userRecordName(s, Self.alice) }, "\(phone)")
        XCTAssertFalse(notes("bob-laptop").isEmpty, "every device of the subscriber is notified")

        // bob writes from his laptop: his phone hears of it, his laptop does not.
        ok(s.run(["--as", Self.bob, "--device", "bob-laptop", "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "eggs", "--parent", "groceries", "title=Eggs"]))
        XCTAssertTrue(notes("bob-phone").contains { $0["subscriptionID"] as? String == "shared-db" })
        XCTAssertEqual(notes("bob-laptop", markRead: false).count, 0, "the device that made the change is not notified of it")
        let aliceNotes = run(s, Self.alice, "notifications").object["notifications"] as? [[String: Any]] ?? []
        XCTAssertTrue(aliceNotes.contains { $0["subscriptionID"] as? String == "mine" && $0["databaseScope"] as? String == "private" })

        // A change to alice's own records does not reach bob.
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "diary", "--force", "text=x"))
        XCTAssertEqual((run(s, Self.bob, "notifications").object["notifications"] as? [Any])?.count, 0)
    }

    func testRecordModifyAcceptsAWebServicesShareCreate() {
        let s = sandbox()
        makeList(s)
        let tag = run(s, Self.alice, "--zone", "Lists", "record", "get", "groceries").record["recordChangeTag"] as? String ?? ""
        let body = """
        {"zoneID": {"zoneName": "Lists"}, "operations": [{"operationType": "create", "record": {
          "recordType": "cloudkit.share", "fields": {}, "forRecord": {"recordName": "groceries", "recordChangeTag": "\(tag)"},
          "publicPermission": "NONE",
          "participants": [{"type": "USER", "permission": "READ_WRITE", "acceptanceStatus": "INVITED",
                            "userIdentity": {"lookupInfo": {"emailAddress": "\(Self.bob)"}}}]}}]}
        """
        let r = run(s, Self.alice, "record", "modify", stdin: body)
        ok(r)
        XCTAssertEqual(r.record["recordType"] as? String, "cloudkit.share")
        XCTAssertNotNil(r.record["shortGUID"] as? String)
        XCTAssertNil(r.record["zoneID"], "records/modify responses carry no zoneID")
        let people = (r.record["participants"] as? [[String: Any]] ?? []).map { (($0["userIdentity"] as? [String: Any])?["lookupInfo"] as? [String: String])?["emailAddress"] }
        XCTAssertEqual(people, [Self.alice, Self.bob])
        ok(run(s, Self.bob, "share", "accept", r.record["shortGUID"] as? String ?? ""))
        XCTAssertTrue(names(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "list")).contains("milk"))
        // A stale forRecord tag is a CONFLICT, and changes nothing.
        s.assertUnchanged("stale forRecord") {
            let again = body.replacingOccurrences(of: "\"groceries\", \"recordChangeTag\": \"\(tag)\"", with: "\"milk\", \"recordChangeTag\": \"zz\"")
            XCTAssertEqual(run(s, Self.alice, "record", "modify", stdin: again).status, 9)
        }
    }
}
