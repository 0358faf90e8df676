import CKTestSupport
import XCTest

/// The change-tracking flows of the seed tutorials, on the built binary: subscribe once, change
/// records from another device, get notified, fetch exactly what changed, survive expiry.
final class ChangeFlowTests: XCTestCase {
    /// A zone's page from a changes/zone response, or a changes/database response.
    private func page(_ r: CKResult) -> [String: Any] { r.object["syncToken"] != nil ? r.object : r.zoneChanges }
    private func token(_ r: CKResult) -> String { page(r)["syncToken"] as? String ?? "" }

    func testSubscribeNotifyFetchExpireRecover() {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        let sub1 = s.ck("subscribe"), sub2 = s.ck("subscribe")
        XCTAssertEqual(sub1.status, 0, sub1.stderr)
        XCTAssertEqual(sub1.stdout, sub2.stdout, "subscribing twice is harmless")
        XCTAssertEqual((s.ck("subscription", "list").object["subscriptions"] as? [Any])?.count, 1)
        // The first fetch sets this device's bookmark.
        XCTAssertEqual(names(s.ck("--zone", "Lists", "zone", "changes")), [])

        for n in ["r1", "r2", "r3"] {
            XCTAssertEqual(s.ck("--device", "phone", "--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", n, "title=\(n)").status, 0)
        }
        let notes = s.ck("notifications", "--format", "ndjson").stdout.split(separator: "\n")
        XCTAssertEqual(notes.count, 1, "unread database notifications coalesce into one: \(notes)")
        XCTAssertTrue(notes.first?.contains("\"notificationType\":\"database\"") ?? false)
        XCTAssertTrue(notes.first?.contains("\"subscriptionID\":\"database\"") ?? false)
        XCTAssertEqual(names(s.ck("--device", "phone", "notifications")), [], "the device that saved is not notified")

        let db = s.ck("database", "changes")
        XCTAssertEqual(((db.object["zones"] as? [[String: Any]])?.first?["zoneID"] as? [String: Any])?["zoneName"] as? String, "Lists")
        let first = s.ck("--zone", "Lists", "zone", "changes")
        XCTAssertEqual(names(first), ["r1", "r2", "r3"])
        XCTAssertEqual(page(first)["moreComing"] as? Bool, false)

        XCTAssertEqual(s.ck("--device", "phone", "--zone", "Lists", "record", "save", "--name", "r1", "--force", "title=changed").status, 0)
        XCTAssertEqual(s.ck("--device", "phone", "--zone", "Lists", "record", "delete", "r2").status, 0)
        let second = s.ck("--zone", "Lists", "zone", "changes")
        XCTAssertEqual(names(second), ["r1", "-r2"], "exactly the changed record and a tombstone")
        XCTAssertEqual(((page(second)["records"] as? [[String: Any]])?.first?["fields"] as? [String: Any]).flatMap { ($0["title"] as? [String: Any])?["value"] as? String }, "changed")
        let atHead = s.ck("--zone", "Lists", "zone", "changes")
        XCTAssertEqual(names(atHead), [])
        XCTAssertEqual(token(atHead), token(second), "a token at the head is stable")

        XCTAssertEqual(s.ck("--zone", "Lists", "token", "expire").status, 0)
        s.ck("--device", "phone", "--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", "r4", "title=new")
        s.assertUnchanged("expired bookmark") {
            assertFailure(s.ck("--zone", "Lists", "zone", "changes"), exit: 7, contains: "CHANGE_TOKEN_EXPIRED")
            assertFailure(s.ck("--zone", "Lists", "zone", "changes", "--since", token(second)), exit: 7, contains: "fetch again from the start: ck --zone Lists zone changes --from-start")
        }
        let recovered = s.ck("--zone", "Lists", "zone", "changes", "--from-start")
        XCTAssertEqual(recovered.status, 0, recovered.stderr)
        // Each record at its latest change (r1's update came after r3); r2's deletion is not
        // this device's to hear of from the start: the phone made r2 (reference §5.4).
        XCTAssertEqual(names(recovered), ["r3", "r1", "r4"])
        XCTAssertEqual(names(s.ck("--zone", "Lists", "zone", "changes")), [], "the bookmark moved to the recovered head")
    }

    func testPagesFollowTheBookmarkAndDevicesKeepTheirOwn() {
        let s = Sandbox()
        s.signIn()
        s.ck("zone", "create", "Z")
        let ops = (1...5).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"n\($0)\",\"recordType\":\"Item\",\"fields\":{}}}" }
        XCTAssertEqual(s.ck("--zone", "Z", "record", "modify", stdin: "{\"operations\":[\(ops.joined(separator: ","))]}").status, 0)
        let p1 = s.ck("--zone", "Z", "zone", "changes", "--limit", "2")
        XCTAssertEqual(names(p1), ["n1", "n2"])
        XCTAssertEqual(page(p1)["moreComing"] as? Bool, true)
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes", "--limit", "2")), ["n3", "n4"])
        let p3 = s.ck("--zone", "Z", "zone", "changes", "--limit", "2", "--format", "ndjson")
        XCTAssertEqual(p3.stdout.split(separator: "\n").count, 2, "one record line, then the page's syncToken/moreComing line")
        XCTAssertTrue(p3.stdout.contains("\"moreComing\":false"))
        // Another device starts from nothing; --no-save leaves its bookmark alone.
        XCTAssertEqual(names(s.ck("--device", "ipad", "--zone", "Z", "zone", "changes", "--no-save")).count, 5)
        XCTAssertEqual(names(s.run(["--zone", "Z", "zone", "changes"], env: ["CK_DEVICE": "ipad"])).count, 5)
        XCTAssertEqual(names(s.run(["--zone", "Z", "zone", "changes"], env: ["CK_DEVICE": "ipad"])).count, 0)
    }

    func testBadTokensLimitsAndSubscriptionsChangeNothing() {
        let s = Sandbox()
        s.signIn()
        s.ck("zone", "create", "A")
        s.ck("zone", "create", "B")
        s.ck("--zone", "A", "record", "save", "--type", "Item", "--name", "x", "n=1")
        let tok = token(s.ck("--zone", "A", "zone", "changes", "--no-save"))
        let dbTok = token(s.ck("database", "changes", "--no-save"))
        s.assertUnchanged("bad input") {
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--since", String(tok.dropLast(3))), exit: 6, contains: "BAD_REQUEST")
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--since", "not-a-token"), exit: 6, contains: "not valid")
            assertFailure(s.ck("--zone", "B", "zone", "changes", "--since", tok), exit: 6, contains: "belongs to zone 'A'")
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--since", dbTok), exit: 6, contains: "database change token")
            assertFailure(s.ck("database", "changes", "--since", tok), exit: 6, contains: "zone change token")
            assertFailure(s.ck("zone", "changes"), exit: 6, contains: "default zone has no change feed")
            assertFailure(s.ck("--db", "public", "zone", "changes"), exit: 6, contains: "public database")
            assertFailure(s.ck("--zone", "Nope", "zone", "changes"), exit: 3, contains: "ZONE_NOT_FOUND")
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--limit", "0"), exit: 2, contains: "--limit")
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--limit", "-3"), exit: 2)
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--since", tok, "--from-start"), exit: 2, contains: "exclude")
            assertFailure(s.ck("--zone", "A", "zone", "changes", "--bogus"), exit: 2, contains: "--bogus")
            assertFailure(s.ck("subscribe", "query", "--type", "Item", "--fires-on", "create,explode"), exit: 2, contains: "explode")
            assertFailure(s.ck("subscribe", "query", "--type", "Item", "--filter", "n >>> 3"), exit: 2, contains: "comparator")
            assertFailure(s.ck("subscribe", "query", "--type", "Item", "--filter", "n"), exit: 2, contains: "FIELD OP VALUE")
            assertFailure(s.ck("subscribe", "query"), exit: 2, contains: "--type")
            assertFailure(s.ck("subscribe", "sometimes"), exit: 2, contains: "unknown subscription kind")
            assertFailure(s.ck("subscribe", "--id", "../x"), exit: 6, contains: "invalid subscription ID")
            assertFailure(s.ck("--zone", "_defaultZone", "subscribe", "zone"), exit: 6, contains: "custom zones")
            assertFailure(s.ck("--db", "public", "subscribe"), exit: 6, contains: "public database")
            assertFailure(s.ck("subscription", "get", "nope"), exit: 3, contains: "NOT_FOUND")
            assertFailure(s.ck("subscription", "delete", "nope"), exit: 3, contains: "NOT_FOUND")
            assertFailure(s.ck("notifications", "--timeout", "1"), exit: 2, contains: "--follow")
        }
        s.ck("account", "signout")
        s.assertUnchanged("signed out") {
            assertFailure(s.ck("--zone", "A", "zone", "changes"), exit: 5, contains: "AUTHENTICATION_REQUIRED")
            assertFailure(s.ck("subscribe"), exit: 5)
            assertFailure(s.ck("notifications"), exit: 5)
        }
    }

    func testQuerySubscriptionFiresOnceWithReasonAndRecordName() {
        let s = Sandbox()
        s.signIn()
        let sub = s.ck("subscribe", "query", "--type", "Item", "--filter", "n > 2", "--fires-on", "create", "--fires-once", "--alert-body", "Big one")
        XCTAssertEqual(sub.status, 0, sub.stderr)
        XCTAssertEqual((sub.object["subscriptions"] as? [[String: Any]])?.first?["firesOnce"] as? Bool, true)
        s.ck("--device", "phone", "record", "save", "--type", "Item", "--name", "small", "n=1")
        s.ck("--device", "phone", "record", "save", "--type", "Item", "--name", "big", "n=5")
        s.ck("--device", "phone", "record", "save", "--type", "Item", "--name", "bigger", "n=9")
        let notes = s.ck("notifications", "--mark-read").object["notifications"] as? [[String: Any]] ?? []
        XCTAssertEqual(notes.count, 1)
        XCTAssertEqual(notes.first?["recordName"] as? String, "big")
        XCTAssertEqual(notes.first?["queryNotificationReason"] as? String, "recordCreated")
        XCTAssertEqual(notes.first?["alertBody"] as? String, "Big one")
        XCTAssertEqual((s.ck("subscription", "list").object["subscriptions"] as? [Any])?.count, 0)
        XCTAssertEqual((s.ck("notifications").object["notifications"] as? [Any])?.count, 0, "--mark-read emptied the inbox")
    }

    func testFollowPrintsAnotherProcessSaveWithinASecondAndStopsOnSIGINT() throws {
        let s = Sandbox()
        s.signIn()
        s.ck("zone", "create", "Z")
        s.ck("--zone", "Z", "subscribe", "zone")
        let p = Process()
        p.executableURL = Sandbox.binary
        p.arguments = ["notifications", "--follow", "--timeout", "20"]
        p.environment = s.environment
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(s.ck("--device", "phone", "--zone", "Z", "record", "save", "--type", "Item", "--name", "a").status, 0)
        let saved = Date()
        var got = Data()
        let fd = out.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        while Date().timeIntervalSince(saved) < 3, !got.contains(0x0A) {
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buf, buf.count)
            if n > 0 { got.append(contentsOf: buf[0..<n]) } else { usleep(20_000) }
        }
        let delay = Date().timeIntervalSince(saved)
        XCTAssertLessThan(delay, 1.0, "the notification must show up within a second")
        XCTAssertTrue(String(decoding: got, as: UTF8.self).contains("\"notificationType\":\"recordZone\""))
        p.interrupt()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "SIGINT ends --follow cleanly")
    }
}
