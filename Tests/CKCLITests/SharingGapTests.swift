import CKTestSupport
import Foundation
import XCTest

/// Sharing's finer rules (Docs/sharing.md, "The rules"): a participant's delete never cascades
/// outside what they may delete; one share per record, whichever way round; a deleted root
/// takes its share with it; the shared database's change feed pages; accepting a share can be
/// faulted; `ck status` reads the shared database's bookmark.
final class SharingGapTests: XCTestCase {
    static let alice = "alice@example.com", bob = "bob@example.com", carol = "carol@example.com"

    @discardableResult
    func run(_ s: CLISandbox, _ user: String, _ args: String..., stdin: String? = nil) -> CKResult {
        s.run(["--as", user, "--device", String(user.prefix { $0 != "@" }) + "-phone"] + args, stdin: stdin)
    }

    func ok(_ r: CKResult, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
    }

    func alice(_ s: CLISandbox, _ args: String...) {
        ok(s.run(["--as", Self.alice] + args))
    }

    /// alice's zone Lists: `groceries` (shared with bob readWrite and carol readOnly, both
    /// accepted) with the item `milk` under it, and her own `diary`. Returns the short GUID.
    @discardableResult
    func sharedList(_ s: CLISandbox) -> String {
        for u in [Self.carol, Self.bob, Self.alice] { s.signIn(u) }
        alice(s, "zone", "create", "Lists")
        alice(s, "--zone", "Lists", "record", "save", "--type", "List", "--name", "groceries", "title=Groceries")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "milk", "--parent", "groceries", "title=Milk")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Note", "--name", "diary", "text=private")
        let share = run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries",
                        "--participant", "\(Self.bob):readWrite", "--participant", "\(Self.carol):readOnly")
        ok(share)
        let guid = share.record["shortGUID"] as? String ?? ""
        ok(run(s, Self.bob, "share", "accept", guid))
        ok(run(s, Self.carol, "share", "accept", guid))
        return guid
    }

    func zones(_ r: CKResult) -> [String] {
        ((r.object["zones"] as? [[String: Any]]) ?? []).map {
            (($0["zoneID"] as? [String: Any])?["zoneName"] as? String ?? "?") + (($0["deleted"] as? Bool) == true ? " deleted" : "")
        }
    }

    // MARK: 1. cascades

    func testParticipantsDeleteNeverCascadesOutsideTheirPermission() {
        let s = CLISandbox()
        sharedList(s)
        // alice's own note points at milk with DELETE_SELF; a VALIDATE note of hers guards cheese;
        // the root itself points at butter with DELETE_SELF.
        alice(s, "--zone", "Lists", "record", "save", "--name", "diary", "--force", "about:REFERENCE=milk,DELETE_SELF")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "cheese", "--parent", "groceries", "title=Cheese")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Note", "--name", "ledger", "about:REFERENCE=cheese,VALIDATE")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "butter", "--parent", "groceries", "title=Butter")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "bread", "--parent", "groceries", "title=Bread")
        alice(s, "--zone", "Lists", "record", "save", "--name", "groceries", "--force", "pinned:REFERENCE=butter,DELETE_SELF")
        // A second share bob may only read, whose cup points at milk's sibling jam.
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "jam", "--parent", "groceries", "title=Jam")
        alice(s, "--zone", "Lists", "record", "save", "--type", "List", "--name", "party", "title=Party")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "cup", "--parent", "party", "on:REFERENCE=jam,DELETE_SELF")
        let party = run(s, Self.alice, "--zone", "Lists", "share", "create", "party", "--participant", "\(Self.bob):readOnly")
        ok(party)
        ok(run(s, Self.bob, "share", "accept", party.record["shortGUID"] as? String ?? ""))

        s.assertUnchanged("participant cascades") {
            let hidden = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", "milk", "--force")
            assertFailure(hidden, exit: 5, contains: "not shared with this user")
            XCTAssertFalse(hidden.stderr.contains("diary"), "a record bob may not see is never named: \(hidden.stderr)")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", "butter", "--force"), exit: 5, contains: "root record")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", "jam", "--force"), exit: 5, contains: "READ_ONLY")
            let guarded = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", "cheese", "--force")
            assertFailure(guarded, exit: 6, contains: "VALIDATING_REFERENCE_ERROR")
            XCTAssertFalse(guarded.stderr.contains("ledger"), guarded.stderr)
            // In an atomic records/modify batch too: nothing of it is applied.
            let batch = #"{"operations":[{"operationType":"forceDelete","record":{"recordName":"bread"}},{"operationType":"forceDelete","record":{"recordName":"milk"}}]}"#
            let r = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "modify", stdin: batch)
            XCTAssertEqual(r.status, 9, r.stderr)
            XCTAssertEqual(((r.object["records"] as? [[String: Any]]) ?? []).map { $0["serverErrorCode"] as? String }, ["ATOMIC_ERROR", "ACCESS_DENIED"])
        }
        // Inside the share a cascade goes through: once alice's diary no longer points at milk,
        // bob's note on milk (shared like milk) goes with it.
        alice(s, "--zone", "Lists", "record", "save", "--name", "diary", "--force", "--replace", "text=private")
        ok(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--type", "Item", "--name", "note", "--parent", "groceries", "on:REFERENCE=milk,DELETE_SELF"))
        let d = run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "delete", "milk", "--force")
        ok(d)
        XCTAssertEqual(run(s, Self.alice, "--zone", "Lists", "record", "get", "milk", "note", "diary").object["records"].map { r in
            ((r as? [[String: Any]]) ?? []).map { ($0["serverErrorCode"] as? String) ?? ($0["recordName"] as? String ?? "?") }
        }, ["NOT_FOUND", "NOT_FOUND", "diary"])
    }

    // MARK: 2. one share per record

    func testSharingARecordWithASharedDescendantIsAlreadyShared() {
        let s = CLISandbox()
        sharedList(s)
        alice(s, "--zone", "Lists", "record", "save", "--type", "Folder", "--name", "home", "title=Home")
        alice(s, "--zone", "Lists", "record", "save", "--type", "List", "--name", "chores", "--parent", "home", "title=Chores")
        alice(s, "--zone", "Lists", "record", "save", "--type", "Item", "--name", "dishes", "--parent", "chores", "title=Dishes")
        alice(s, "--zone", "Lists", "share", "create", "chores")
        s.assertUnchanged("nested shares") {
            // Above a shared root, below it, and the root again.
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "home"), exit: 4, contains: "descendant 'chores'")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "dishes"), exit: 4, contains: "ALREADY_SHARED")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "create", "chores"), exit: 4, contains: "ALREADY_SHARED")
            // Moving a shared root, or a record with one below it, under another share.
            assertFailure(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "chores", "--force", "--parent", "milk", "title=Chores"), exit: 4, contains: "root of share")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "home", "--force", "--parent", "groceries", "title=Home"), exit: 4, contains: "descendant 'chores'")
            assertFailure(run(s, Self.bob, "--db", "shared", "--zone", "Lists", "record", "save", "--name", "milk", "--force", "--parent", "dishes", "title=x"), exit: 5)
            // A share of a record and one of its parent in one records/modify request.
            let twice = #"{"operations":["# +
                #"{"operationType":"create","record":{"recordName":"attic","recordType":"Folder","fields":{}}},"# +
                #"{"operationType":"create","record":{"recordName":"box","recordType":"List","parent":{"recordName":"attic"},"fields":{}}},"# +
                #"{"operationType":"create","record":{"recordName":"s1","recordType":"cloudkit.share","fields":{},"forRecord":{"recordName":"box"}}},"# +
                #"{"operationType":"create","record":{"recordName":"s2","recordType":"cloudkit.share","fields":{},"forRecord":{"recordName":"attic"}}}]}"#
            let r = run(s, Self.alice, "--zone", "Lists", "record", "modify", stdin: twice)
            XCTAssertEqual(r.status, 9, r.stderr)
            XCTAssertEqual(((r.object["records"] as? [[String: Any]]) ?? []).map { $0["serverErrorCode"] as? String },
                           ["ATOMIC_ERROR", "ATOMIC_ERROR", "ATOMIC_ERROR", "ALREADY_SHARED"])
        }
        // A record that leaves a share for another (no share below it) moves freely.
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--name", "dishes", "--force", "--parent", "groceries", "title=Dishes"))
    }

    // MARK: 3. a deleted root takes its share

    func testDeletingTheRootDeletesItsShare() {
        let s = CLISandbox()
        sharedList(s)
        for u in [Self.bob, Self.carol] { XCTAssertEqual(zones(run(s, u, "--db", "shared", "database", "changes")), ["Lists"], u) }
        let shareName = run(s, Self.alice, "--zone", "Lists", "share", "get", "groceries").record["recordName"] as? String ?? ""
        let d = run(s, Self.alice, "--zone", "Lists", "record", "delete", "groceries", "--force")
        ok(d)
        XCTAssertEqual(names(d), ["groceries"])
        // The share is gone with its root; the item stays in alice's zone, hers alone now.
        assertFailure(run(s, Self.alice, "--zone", "Lists", "share", "get", shareName), exit: 3)
        XCTAssertEqual(names(run(s, Self.alice, "--zone", "Lists", "share", "list")), [])
        XCTAssertEqual(names(run(s, Self.alice, "--zone", "Lists", "record", "get", "milk")), ["milk"])
        // bob's and carol's shared databases report the zone deleted, then know it no more.
        for u in [Self.bob, Self.carol] {
            XCTAssertEqual(zones(run(s, u, "--db", "shared", "database", "changes")), ["Lists deleted"], u)
            assertFailure(run(s, u, "--db", "shared", "--zone", "Lists", "zone", "changes"), exit: 3, contains: "ZONE_NOT_FOUND")
        }
        // alice's own feed carries the share's tombstone.
        let mine = run(s, Self.alice, "--zone", "Lists", "zone", "changes", "--from-start")
        let live = ((mine.zoneChanges["records"] as? [[String: Any]]) ?? []).filter { $0["deleted"] as? Bool != true }.compactMap { $0["recordName"] as? String }
        XCTAssertEqual(live.sorted(), ["diary", "milk"])

        // A root deleted by a cascade takes its share too.
        alice(s, "--zone", "Lists", "record", "save", "--type", "Box", "--name", "box", "t=1")
        alice(s, "--zone", "Lists", "record", "save", "--type", "List", "--name", "trip", "in:REFERENCE=box,DELETE_SELF")
        let trip = run(s, Self.alice, "--zone", "Lists", "share", "create", "trip", "--participant", "\(Self.bob):readOnly")
        ok(trip)
        ok(run(s, Self.bob, "share", "accept", trip.record["shortGUID"] as? String ?? ""))
        XCTAssertEqual(zones(run(s, Self.bob, "--db", "shared", "database", "changes")), ["Lists"])
        ok(run(s, Self.alice, "--zone", "Lists", "record", "delete", "box", "--force"))
        XCTAssertEqual(names(run(s, Self.alice, "--zone", "Lists", "share", "list")), [])
        XCTAssertEqual(zones(run(s, Self.bob, "--db", "shared", "database", "changes")), ["Lists deleted"])
    }

    /// Restoring a zone to before its shared root was deleted brings the records back, not the
    /// share (shares are made by share operations); reverting the share's deletion, or restoring
    /// it by name, is refused with a clear error and changes nothing.
    func testRestoreAfterARootWasDeletedBringsBackTheRecordsNotTheShare() {
        let s = CLISandbox()
        sharedList(s)
        let shareName = run(s, Self.alice, "--zone", "Lists", "share", "get", "groceries").record["recordName"] as? String ?? ""
        alice(s, "tag", "create", "before")
        alice(s, "--zone", "Lists", "record", "delete", "groceries", "--force")
        // Every device's changes (the helper names a device, which log takes as a filter).
        let log = s.run(["--as", Self.alice, "--zone", "Lists", "log", "--limit", "5", "--format", "ndjson"])
        let shareDelete = log.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["recordName"] as? String == shareName }?["seq"] as? Int
        XCTAssertNotNil(shareDelete, log.stdout)
        s.assertUnchanged("share records are not restored as records") {
            assertFailure(run(s, Self.alice, "--zone", "Lists", "revert", "Lists@\(shareDelete ?? 0)"), exit: 6, contains: "share record")
            assertFailure(run(s, Self.alice, "--zone", "Lists", "restore", "before", shareName), exit: 6, contains: "make the share again with ck --zone Lists --as alice@example.com share create RECORD")
        }
        let r = run(s, Self.alice, "--zone", "Lists", "restore", "before")
        ok(r)
        XCTAssertEqual(names(run(s, Self.alice, "--zone", "Lists", "record", "get", "groceries")), ["groceries"])
        XCTAssertEqual(names(run(s, Self.alice, "--zone", "Lists", "share", "list")), [])
    }

    /// A record made now under a shared record may already have children (records naming it as
    /// their parent): if one of them is another share's root, the save is ALREADY_SHARED.
    func testANewRecordCannotPutOneShareInsideAnother() {
        let s = CLISandbox()
        sharedList(s)
        // `orphan` names a parent that does not exist yet, and is the root of a share.
        alice(s, "--zone", "Lists", "record", "save", "--type", "List", "--name", "orphan", "--parent", "missing", "title=Orphan")
        alice(s, "--zone", "Lists", "share", "create", "orphan")
        s.assertUnchanged("a new record joining two shares") {
            assertFailure(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Folder", "--name", "missing", "--parent", "groceries", "t=1"),
                          exit: 4, contains: "descendant 'orphan'")
        }
        // Outside any share it is made as usual.
        ok(run(s, Self.alice, "--zone", "Lists", "record", "save", "--type", "Folder", "--name", "missing", "t=1"))
    }

    // MARK: 4. the shared database's feed pages

    func testSharedDatabaseChangesPageWithLimit() {
        let s = CLISandbox()
        for u in [Self.bob, Self.alice] { s.signIn(u) }
        for z in ["Alpha", "Bravo", "Charlie"] {
            alice(s, "zone", "create", z)
            alice(s, "--zone", z, "record", "save", "--type", "Card", "--name", "c", "t=1")
            let share = run(s, Self.alice, "--zone", z, "share", "create", "--zone-wide", "--participant", "\(Self.bob):readOnly")
            ok(share)
            ok(run(s, Self.bob, "share", "accept", share.record["shortGUID"] as? String ?? ""))
        }
        let p1 = run(s, Self.bob, "--db", "shared", "database", "changes", "--limit", "2")
        XCTAssertEqual(zones(p1), ["Alpha", "Bravo"])
        XCTAssertEqual(p1.object["moreComing"] as? Bool, true)
        let p2 = run(s, Self.bob, "--db", "shared", "database", "changes", "--limit", "2")
        XCTAssertEqual(zones(p2), ["Charlie"])
        XCTAssertEqual(p2.object["moreComing"] as? Bool, false)
        XCTAssertEqual(zones(run(s, Self.bob, "--db", "shared", "database", "changes", "--limit", "2")), [])
        // A token from the first page continues where it stopped.
        let again = run(s, Self.bob, "--db", "shared", "database", "changes", "--since", p1.object["syncToken"] as? String ?? "", "--limit", "1")
        XCTAssertEqual(zones(again), ["Charlie"])
        XCTAssertEqual(again.object["moreComing"] as? Bool, false)
        // A change and a deletion, one a page; --all gathers the pages.
        alice(s, "--zone", "Charlie", "record", "save", "--type", "Card", "--name", "d", "t=2")
        alice(s, "--zone", "Alpha", "share", "delete", "cloudkit.zoneshare")
        let all = run(s, Self.bob, "--db", "shared", "database", "changes", "--limit", "1", "--all", "--no-save")
        XCTAssertEqual(zones(all), ["Charlie", "Alpha deleted"])
        let q1 = run(s, Self.bob, "--db", "shared", "database", "changes", "--limit", "1")
        XCTAssertEqual(zones(q1), ["Charlie"])
        XCTAssertEqual(q1.object["moreComing"] as? Bool, true)
        XCTAssertEqual(zones(run(s, Self.bob, "--db", "shared", "database", "changes", "--limit", "1")), ["Alpha deleted"])
    }

    // MARK: 5. share accept is faultable

    func testShareAcceptCanBeFaulted() {
        let s = CLISandbox()
        for u in [Self.bob, Self.alice] { s.signIn(u) }
        alice(s, "zone", "create", "Lists")
        alice(s, "--zone", "Lists", "record", "save", "--type", "List", "--name", "groceries", "title=Groceries")
        let share = run(s, Self.alice, "--zone", "Lists", "share", "create", "groceries", "--participant", "\(Self.bob):readWrite")
        ok(share)
        let guid = share.record["shortGUID"] as? String ?? ""
        ok(s.ck("fault", "add", "--op", "records/accept", "--error", "THROTTLED", "--retry-after", "3"))
        s.assertUnchanged("a faulted accept") {
            assertFailure(run(s, Self.bob, "share", "accept", guid), exit: 8, contains: "THROTTLED")
            // Only accepting is faulted.
            ok(run(s, Self.bob, "--db", "shared", "share", "list"))
        }
        ok(s.ck("fault", "clear"))
        let accepted = run(s, Self.bob, "share", "accept", guid)
        ok(accepted)
        XCTAssertEqual((accepted.object["results"] as? [[String: Any]])?.first?["participantStatus"] as? String, "ACCEPTED")
        // And by '*', like every client operation.
        ok(s.ck("fault", "add", "--op", "*", "--error", "SERVICE_UNAVAILABLE"))
        assertFailure(run(s, Self.bob, "share", "accept", guid), exit: 8, contains: "SERVICE_UNAVAILABLE")
    }

    // MARK: 6. ck status in the shared database

    func testStatusReadsTheSharedDatabaseBookmark() {
        let s = CLISandbox()
        sharedList(s)
        func bookmark() -> [String: Any] {
            let r = run(s, Self.bob, "--db", "shared", "status")
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.object["databaseChanges"] as? [String: Any] ?? [:]
        }
        XCTAssertEqual(bookmark()["bookmark"] as? String, "none")
        XCTAssertEqual(bookmark()["behind"] as? Int, 1)
        ok(run(s, Self.bob, "--db", "shared", "database", "changes"))
        XCTAssertEqual(bookmark()["bookmark"] as? String, "upToDate", "nothing to fetch: up to date, not behind")
        XCTAssertEqual(bookmark()["behind"] as? Int, 0)
        // alice's diary is not bob's business; her milk is.
        alice(s, "--zone", "Lists", "record", "save", "--name", "diary", "--force", "text=still private")
        XCTAssertEqual(bookmark()["behind"] as? Int, 0)
        alice(s, "--zone", "Lists", "record", "save", "--name", "milk", "--force", "title=Oat milk")
        XCTAssertEqual(bookmark()["behind"] as? Int, 1)
        // The status of the private database is the private bookmark's, as before.
        XCTAssertEqual((run(s, Self.bob, "status").object["databaseChanges"] as? [String: Any])?["bookmark"] as? String, "none")
    }
}
