import CKTestSupport
import Foundation
import XCTest

/// Issue 30, items 7, 8 and 10, as the command line shows them: several lookups in one
/// `user discover`, the notification info options of `subscribe`, `notifications --format
/// aps`, cktool's command names and NSPredicate habits, and the completions.
final class FidelityCommandTests: XCTestCase {
    func testUserDiscoverTakesSeveralLookupsAndAnUnknownUserIsAnEmptyList() {
        let s = CLISandbox()
        s.ck("account", "signin", "carol@example.com", "--phone", "+44 20 7946 0001")
        s.ck("account", "signin", "bob@example.com")
        for u in ["bob", "carol"] { s.ck("--as", "\(u)@example.com", "permission", "request", "userDiscoverability") }
        s.ck("account", "signin", "alice@example.com")
        let found = s.ck("user", "discover", "--email", "bob@example.com", "--phone", "+442079460001", "--email", "zed@example.com")
        XCTAssertEqual(found.status, 0, found.stderr)
        let users = (found.object["users"] as? [[String: Any]]) ?? []
        XCTAssertEqual(users.compactMap { ($0["lookupInfo"] as? [String: Any])?["emailAddress"] as? String }, ["bob@example.com", "carol@example.com"])
        let none = s.ck("user", "discover", "--email", "zed@example.com")
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertEqual((none.object["users"] as? [Any])?.count, 0)
    }

    func testSubscribeFillsTheNotificationInfoAndNotificationsPrintThePush() {
        let s = CLISandbox()
        s.signIn()
        let saved = s.ck("subscribe", "query", "--type", "Item", "--id", "items", "--alert-body", "New item", "--title", "Lists",
                         "--subtitle", "Groceries", "--sound", "ping.aiff", "--badge", "--category", "ITEM", "--collapse-id-key", "items",
                         "--desired-keys", "title,n", "--mutable-content", "--content-available",
                         "--alert-localization-key", "NEW", "--alert-localization-args", "title")
        XCTAssertEqual(saved.status, 0, saved.stderr)
        let info = ((saved.object["subscriptions"] as? [[String: Any]])?.first?["notificationInfo"] as? [String: Any]) ?? [:]
        XCTAssertEqual(info["title"] as? String, "Lists")
        XCTAssertEqual(info["subtitle"] as? String, "Groceries")
        XCTAssertEqual(info["soundName"] as? String, "ping.aiff")
        XCTAssertEqual(info["shouldBadge"] as? Bool, true)
        XCTAssertEqual(info["category"] as? String, "ITEM")
        XCTAssertEqual(info["collapseIDKey"] as? String, "items")
        XCTAssertEqual(info["additionalFields"] as? [String], ["title", "n"])
        XCTAssertEqual(info["shouldSendMutableContent"] as? Bool, true)
        XCTAssertEqual(info["alertLocalizationArgs"] as? [String], ["title"])
        assertFailure(s.ck("subscribe", "query", "--type", "Item", "--desired-keys", "not a field"), exit: 6)

        XCTAssertEqual(s.ck("--device", "phone", "notifications").status, 0)
        XCTAssertEqual(s.ck("record", "save", "--type", "Item", "--name", "i1", "title=Milk", "n=2").status, 0)
        let aps = s.ck("--device", "phone", "notifications", "--format", "aps")
        XCTAssertEqual(aps.status, 0, aps.stderr)
        let lines = aps.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, aps.stdout)
        let push = (try? JSONSerialization.jsonObject(with: Data(lines[0].utf8))) as? [String: Any] ?? [:]
        let a = push["aps"] as? [String: Any] ?? [:]
        XCTAssertEqual((a["alert"] as? [String: Any])?["body"] as? String, "New item")
        XCTAssertEqual((a["alert"] as? [String: Any])?["title"] as? String, "Lists")
        XCTAssertEqual((a["alert"] as? [String: Any])?["loc-args"] as? [String], ["Milk"])
        XCTAssertEqual(a["sound"] as? String, "ping.aiff")
        XCTAssertEqual(a["badge"] as? Int, 1)
        XCTAssertEqual(a["category"] as? String, "ITEM")
        XCTAssertEqual(a["content-available"] as? Int, 1)
        XCTAssertEqual(a["mutable-content"] as? Int, 1)
        let qry = (push["ck"] as? [String: Any])?["qry"] as? [String: Any] ?? [:]
        XCTAssertEqual(qry["rid"] as? String, "i1")
        XCTAssertEqual(qry["sid"] as? String, "items")
        XCTAssertEqual(qry["fo"] as? Int, 1)
        XCTAssertEqual((qry["af"] as? [String: Any])?["title"] as? String, "Milk")
        // The same notifications as JSON carry the same facts under CKNotification's names.
        let listed = (s.ck("--device", "phone", "notifications").object["notifications"] as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual((listed["recordFields"] as? [String: Any])?["n"] as? Int, 2)
        // aps is a format of notifications only.
        assertFailure(s.ck("record", "list", "--format", "aps"), exit: 2, contains: "--format aps")
    }

    func testSubscribeDatabaseRefusesAZone() {
        let s = CLISandbox()
        s.signIn()
        s.ck("zone", "create", "Lists")
        s.assertUnchanged("a database subscription with a zone") {
            assertFailure(s.ck("--zone", "Lists", "subscribe", "database"), exit: 2, contains: "takes no --zone")
            assertFailure(s.ck("--zone", "Lists", "subscribe"), exit: 2, contains: "takes no --zone")
        }
    }

    func testCktoolCommandNamesGetTheirCkCommand() {
        let s = CLISandbox()
        let cases = ["query-records": "ck record query", "export-schema": "ck schema export", "create-record": "ck record save",
                     "delete-record": "ck record delete", "import-schema": "ck schema import", "reset-schema": "ck schema reset"]
        for (cktool, ck) in cases {
            assertFailure(s.ck(cktool), exit: 2, contains: "did you mean '\(ck)'")
        }
        assertFailure(s.ck("save-token"), exit: 2, contains: "needs no token")
    }

    func testInProductionAListIsRefusedAsTheSameQueryIs() throws {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("record", "save", "--type", "Item", "--name", "i1", "title=x").status, 0)
        XCTAssertEqual(s.ck("schema", "deploy").status, 0)
        let prod = ["--env", "production"]
        XCTAssertEqual(s.run(prod + ["record", "save", "--type", "Item", "--name", "p1", "title=y"]).status, 0)
        s.assertUnchanged("production list and query without the index") {
            assertFailure(s.run(prod + ["record", "query", "--type", "Item"]), exit: 6, contains: "Field 'recordName' is not marked queryable")
            assertFailure(s.run(prod + ["record", "list", "--type", "Item"]), exit: 6, contains: "Field 'recordName' is not marked queryable")
            assertFailure(s.run(prod + ["record", "list"]), exit: 6, contains: "record type 'Item': Field 'recordName' is not marked queryable")
        }
        // With the index, both answer.
        let schema = s.root.appendingPathComponent("schema.ckdb")
        try """
        DEFINE SCHEMA
            RECORD TYPE Item (
                "___recordID" REFERENCE QUERYABLE,
                title STRING QUERYABLE SEARCHABLE SORTABLE
            );
        """.write(to: schema, atomically: true, encoding: .utf8)
        let imported = s.ck("schema", "import", schema.path)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(s.ck("schema", "deploy").status, 0)
        let query = s.run(prod + ["record", "query", "--type", "Item"])
        XCTAssertEqual(query.status, 0, query.stderr)
        let list = s.run(prod + ["record", "list", "--type", "Item"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual((list.object["records"] as? [Any])?.count, 1)
        // In development a list answers, as the Console's does.
        XCTAssertEqual(s.ck("record", "list").status, 0)
    }

    func testNSPredicateHabitsGetAHint() {
        let s = CLISandbox()
        s.signIn()
        let cases: [([String], String)] = [
            (["title BEGINSWITH Get"], "write BEGINS_WITH"),
            (["title beginswith Get"], "write BEGINS_WITH"),
            (["tags CONTAINS x"], "LIST_CONTAINS"),
            (["priority > 3 AND done == 0"], "--filter 'priority > 3' --filter 'done == 0'"),
            (["priority > 3 && done == 0"], "--filter 'priority > 3' --filter 'done == 0'"),
            (["priority > 3 OR done == 0"], "no OR"),
        ]
        for (filters, words) in cases {
            assertFailure(s.run(["record", "query", "--type", "Item"] + filters.flatMap { ["--filter", $0] }), exit: 2, contains: words)
        }
        // A value that merely holds the word is a value.
        XCTAssertEqual(s.ck("record", "save", "--type", "Item", "--name", "i1", "title=salt and pepper").status, 0)
        let found = s.ck("record", "query", "--type", "Item", "--filter", "title == salt and pepper")
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertEqual((found.object["records"] as? [Any])?.count, 1)
    }
}
