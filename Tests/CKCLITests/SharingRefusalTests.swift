import CKTestSupport
import Foundation
import XCTest

/// Every refusal of sharing (Docs/sharing.md): its exit code, one line on stderr, and the data
/// directory byte for byte as it was.
final class SharingRefusalTests: XCTestCase {
    static let alice = "alice@example.com", bob = "bob@example.com", carol = "carol@example.com", dave = "dave@example.com"

    @discardableResult
    func run(_ s: CLISandbox, _ user: String, _ args: String...) -> CKResult {
        s.run(["--as", user, "--device", String(user.prefix { $0 != "@" }) + "-phone"] + args)
    }

    /// alice's list shared with bob (readWrite, accepted) and carol (readOnly, accepted); dave
    /// signed in but not invited. Returns the share's short GUID.
    func setUp(_ s: CLISandbox) -> String {
        for u in [Self.dave, Self.carol, Self.bob, Self.alice] { s.signIn(u) }
        for args in [["zone", "create", "Lists"], ["zone", "create", "Other"],
                     ["--zone", "Lists", "record", "save", "--type", "List", "--name", "groceries", "title=Groceries"],
                     ["--zone", "Lists", "record", "save", "--type", "Item", "--name", "milk", "--parent", "groceries", "title=Milk"],
                     ["--zone", "Lists", "record", "save", "--type", "Note", "--name", "diary", "text=private"]] {
            let r = s.run(["--as", Self.alice] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let share = run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries", "--participant", "\(Self.bob):readWrite", "--participant", "\(Self.carol):readOnly")
        XCTAssertEqual(share.status, 0, share.stderr)
        let guid = share.record["shortGUID"] as? String ?? ""
        XCTAssertEqual(run(s, Self.bob, "share", "accept", guid).status, 0)
        XCTAssertEqual(run(s, Self.carol, "share", "accept", guid).status, 0)
        return guid
    }

    func testRefusalsOfShareCreate() {
        let s = CLISandbox()
        _ = setUp(s)
        s.assertUnchanged("share create refusals") {
            // A record already in a share, directly or through its parent.
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries"), exit: 4, contains: "ALREADY_SHARED")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "milk"), exit: 4, contains: "ALREADY_SHARED")
            // A zone with hierarchy shares cannot be shared whole.
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "--zone-wide"), exit: 4, contains: "ALREADY_SHARED")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "nothing"), exit: 3, contains: "NOT_FOUND")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "diary", "--participant", "zed@example.com"), exit: 3, contains: "zed@example.com")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "diary", "--participant", "\(Self.bob):admin"), exit: 2, contains: "readOnly or readWrite")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "diary", "--participant", "not-an-id"), exit: 2, contains: "Apple ID")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "diary", "--public-permission", "everyone"), exit: 2)
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "diary", "--participant", Self.alice), exit: 6, contains: "owner")
            assertFailure(run(s, Self.alice, "share", "create", "diary"), exit: 2, contains: "--zone")
            assertFailure(run(s, Self.alice, "--zone", "_defaultZone", "share", "create", "diary"), exit: 6, contains: "default zone")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "diary", "--zone-wide"), exit: 2)
            assertFailure(run(s, Self.alice, "--zone", "Nowhere", "share", "create", "diary"), exit: 3, contains: "ZONE_NOT_FOUND")
            assertFailure(run(s, Self.alice, "--db", "shared", "--zone", "Lists", "share", "create", "diary"), exit: 6, contains: "private database")
            // bob cannot share alice's records.
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "share", "create", "milk"), exit: 6)
        }
        // A zone-wide share makes the zone's records unsharable by hierarchy.
        XCTAssertEqual(run(s, Self.alice, "--zone", "Other", "record", "save", "--type", "Card", "--name", "a", "t=A").status, 0)
        XCTAssertEqual(run(s, Self.alice, "--zone", "Other", "share", "create", "--zone-wide").status, 0)
        s.assertUnchanged("zone-wide refusals") {
            assertFailure(run(s, Self.alice, "--zone", "Other", "share", "create", "a"), exit: 4, contains: "zone-wide share")
            assertFailure(run(s, Self.alice, "--zone", "Other", "share", "create", "--zone-wide"), exit: 4, contains: "ALREADY_SHARED")
        }
    }

    func testRefusalsOfParticipantsWrites() {
        let s = CLISandbox()
        _ = setUp(s)
        s.assertUnchanged("participant write refusals") {
            // carol is read-only: no create, update or delete.
            assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "cake", "--parent", "groceries", "t=x"), exit: 5, contains: "ACCESS_DENIED")
            assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "save", "--name", "milk", "--force", "title=x"), exit: 5, contains: "READ_ONLY")
            assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "delete", "milk", "--force"), exit: 5, contains: "ACCESS_DENIED")
            // bob may write, but only inside the share, and never delete the root.
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "x", "t=x"), exit: 5, contains: "parent")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "x", "--parent", "diary", "t=x"), exit: 5, contains: "not shared")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "x", "--parent", "ghost", "t=x"), exit: 5, contains: "not shared")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--name", "diary", "--force", "text=mine"), exit: 5, contains: "parent in the share")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", "groceries", "--force"), exit: 5, contains: "root record")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--name", "milk", "--force", "--parent", "diary", "title=x"), exit: 5, contains: "not shared")
            // The share record changes only through share commands, by its owner.
            let shareName = run(s, Self.alice, "--zone", "Lists", "share", "get", "groceries").record["recordName"] as? String ?? ""
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", shareName, "--force"), exit: 5, contains: "owner")
            // Shared zones are the owner's: not deleted, purged or expired from the shared database.
            assertFailure(run(s, Self.bob, "--db", "shared", "zone", "delete", "Lists"), exit: 6, contains: "share leave")
            // The history is the owner's (issue 28): ACCESS_DENIED.
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "token", "expire"), exit: 5, contains: "ACCESS_DENIED")
            // dave was never invited: nothing to see, nothing to write.
            assertFailure(run(s, Self.dave, "--db", "shared", "--zone", "Lists", "record", "get", "milk"), exit: 3, contains: "ZONE_NOT_FOUND")
            assertFailure(run(s, Self.dave, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "x", "--parent", "groceries", "t=x"), exit: 3)
        }
        XCTAssertEqual((run(s, Self.dave, "--db", "shared", "zone", "list").object["zones"] as? [Any])?.count, 0)
    }

    func testRefusalsOfShareManagement() {
        let s = CLISandbox()
        let guid = setUp(s)
        s.assertUnchanged("share management refusals") {
            // A share dave was never invited to does not exist for him: as an unknown short GUID.
            assertFailure(run(s, Self.dave, "share", "accept", guid), exit: 3, contains: "no share has the short GUID")
            assertFailure(run(s, Self.dave, "share", "accept", "0AAAAAAAAAAAAAAAAAAAAAAAA"), exit: 3, contains: "NOT_FOUND")
            assertFailure(run(s, Self.dave, "share", "accept", "not a share!"), exit: 6, contains: "short GUID")
            assertFailure(run(s, Self.dave, "share", "accept"), exit: 2)
            // Only the owner invites, removes and deletes.
            assertFailure(run(s, Self.bob, "share", "add-participant", guid, "\(Self.dave):readWrite"), exit: 5, contains: "owner")
            assertFailure(run(s, Self.bob, "share", "remove-participant", guid, Self.carol), exit: 5, contains: "owner")
            assertFailure(run(s, Self.bob, "share", "delete", guid), exit: 5, contains: "owner")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "remove-participant", "groceries", Self.dave), exit: 3, contains: "not a participant")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "get", "diary"), exit: 3, contains: "not the root of a share")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "leave", "groceries"), exit: 6, contains: "owner cannot leave")
            assertFailure(run(s, Self.dave, "share", "leave", guid), exit: 3, contains: "no share has the short GUID")
        }
        XCTAssertEqual(run(s, Self.alice, "--zone", "Lists", "share", "remove-participant", "groceries", Self.carol).status, 0)
        s.assertUnchanged("removed participant") {
            assertFailure(run(s, Self.carol, "share", "accept", guid), exit: 3, contains: "no share has the short GUID")
            assertFailure(run(s, Self.carol, "--db", "shared", "--zone", "Lists", "record", "get", "milk"), exit: 3)
        }
    }
}
