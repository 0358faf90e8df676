import CKTestSupport
import XCTest

/// The account and identity flows of the seed tutorials (`--follow`: EndToEndTests/AccountFlowTests).
final class AccountFlowTests: XCTestCase {
    func testSignedOutDeviceReadsPublicButCannotSave() {
        let s = CLISandbox()
        XCTAssertEqual(s.ck("account").object["status"] as? String, "noAccount")
        let pub = s.ck("--db", "public", "record", "list")
        XCTAssertEqual(pub.status, 0, pub.stderr)
        s.assertUnchanged("signed-out save") {
            assertFailure(s.ck("--db", "public", "record", "save", "--type", "Note", "text=hi"), exit: 5, contains: "AUTHENTICATION_REQUIRED")
            assertFailure(s.ck("record", "list"), exit: 5, contains: "no iCloud account")
        }
    }

    func testSignInMakesPrivateWritableAndRestrictedBlocksItAgain() {
        let s = CLISandbox()
        let signin = s.ck("account", "signin", "alice@example.com", "--given-name", "Alice")
        XCTAssertEqual(signin.status, 0)
        let user = signin.object["userRecordName"] as? String ?? ""
        XCTAssertNotNil(user.range(of: "^_[0-9a-f]{32}$", options: .regularExpression), user)
        XCTAssertEqual(s.ck("record", "save", "--type", "Note", "--name", "n1", "text=hi").status, 0)
        XCTAssertEqual(s.ck("account", "set-status", "restricted").object["status"] as? String, "restricted")
        assertFailure(s.ck("record", "get", "n1"), exit: 5, contains: "iCloud access is restricted on this device")
        assertFailure(s.ck("record", "save", "--type", "Note", "text=x"), exit: 5, contains: "restricted")
        XCTAssertEqual(s.ck("--db", "public", "record", "list").status, 0, "public stays readable")
        XCTAssertEqual(s.ck("account", "set-status", "available").status, 0)
        XCTAssertEqual(s.ck("record", "get", "n1").status, 0)

        let events = s.ck("account", "events", "--format", "ndjson").stdout.split(separator: "\n")
        XCTAssertEqual(events.count, 3, "sign-in, restricted, available each append an event")
        XCTAssertTrue(events[1].contains("\"status\":\"restricted\""))
        XCTAssertTrue(events.allSatisfy { $0.contains("\"type\":\"accountChanged\"") })
    }

    func testUserRecordNameIsStableAndNeverReused() {
        let s = CLISandbox()
        let a1 = s.ck("account", "signin", "alice@example.com").object["userRecordName"] as? String
        let b = s.ck("account", "signin", "bob@example.com").object["userRecordName"] as? String
        s.ck("account", "signout")
        let a2 = s.ck("account", "signin", "Alice@Example.com").object["userRecordName"] as? String
        XCTAssertEqual(a1, a2)
        XCTAssertNotEqual(a1, b)
    }

    func testEachStatusNamesItselfInTheRefusal() {
        let s = CLISandbox()
        s.signIn()
        let expected = ["noAccount": "no iCloud account", "couldNotDetermine": "could not be determined",
                        "temporarilyUnavailable": "temporarily unavailable", "restricted": "restricted"]
        for (status, words) in expected {
            if status == "noAccount" { s.ck("account", "signout") } else {
                s.signIn()
                XCTAssertEqual(s.ck("account", "set-status", status).status, 0)
            }
            assertFailure(s.ck("record", "list"), exit: 5, contains: words)
        }
    }

    func testWhoamiBeforeAndAfterGrantingDiscoverability() {
        let s = CLISandbox()
        assertFailure(s.ck("whoami"), exit: 5, contains: "AUTHENTICATION_REQUIRED")
        XCTAssertEqual(s.ck("account", "signin", "alice@example.com", "--given-name", "Alice", "--family-name", "Appleseed",
                            "--phone", "+1 408 555 0100").status, 0)
        let before = s.ck("whoami").object
        XCTAssertNil(before["nameComponents"])
        XCTAssertEqual((before["lookupInfo"] as? [String: Any])?["emailAddress"] as? String, "alice@example.com")
        XCTAssertEqual((before["lookupInfo"] as? [String: Any])?["phoneNumber"] as? String, "+1 408 555 0100")
        XCTAssertEqual(s.ck("permission", "status").object["status"] as? String, "initialState")
        XCTAssertEqual(s.ck("permission", "request", "userDiscoverability", "--deny").object["status"] as? String, "denied")
        XCTAssertNil(s.ck("whoami").object["nameComponents"])
        // Answered once, as on a device: asking again does not flip it (issue 30).
        XCTAssertEqual(s.ck("permission", "request", "userDiscoverability").object["status"] as? String, "denied")
        XCTAssertNil(s.ck("whoami").object["nameComponents"])
        // Permission is per container.
        let other = "iCloud.com.example.other"
        XCTAssertEqual(s.ck("--container", other, "permission", "request", "userDiscoverability").object["status"] as? String, "granted")
        let after = s.ck("--container", other, "whoami").object["nameComponents"] as? [String: String]
        XCTAssertEqual(after, ["givenName": "Alice", "familyName": "Appleseed"])
    }

    func testAliceDiscoversBobOnlyAfterBobGrants() {
        let s = CLISandbox()
        s.ck("account", "signin", "bob@example.com", "--given-name", "Bob", "--phone", "+44 20 7946 0000")
        s.ck("account", "signin", "alice@example.com")
        let bobName = s.ck("--as", "bob@example.com", "whoami").object["userRecordName"] as? String ?? ""
        let hidden = s.ck("user", "discover", "--email", "bob@example.com")
        let nobody = s.ck("user", "discover", "--email", "nobody@example.com")
        // Not found, as the native API answers nil: an empty list, exit 0.
        XCTAssertEqual(hidden.status, 0, hidden.stderr)
        XCTAssertEqual((hidden.object["users"] as? [Any])?.count, 0)
        XCTAssertEqual(hidden.stdout, nobody.stdout, "a hidden user and a missing one look the same")
        XCTAssertEqual(hidden.stderr, nobody.stderr)
        XCTAssertEqual(s.ck("--as", "bob@example.com", "permission", "request", "userDiscoverability").status, 0)
        for lookup in [["--email", "bob@example.com"], ["--phone", "+442079460000"], ["--record-name", bobName]] {
            let found = s.run(["user", "discover"] + lookup)
            XCTAssertEqual(found.status, 0, "\(lookup) \(found.stderr)")
            let user = (found.object["users"] as? [[String: Any]])?.first ?? [:]
            XCTAssertEqual(user["userRecordName"] as? String, bobName)
            XCTAssertEqual((user["nameComponents"] as? [String: String])?["givenName"], "Bob")
        }
    }

    func testBobCannotEditAlicesPublicRecord() {
        let s = CLISandbox()
        s.ck("account", "signin", "bob@example.com")
        s.ck("account", "signin", "alice@example.com")
        XCTAssertEqual(s.ck("--db", "public", "record", "save", "--type", "Post", "--name", "p1", "text=hello").status, 0)
        s.assertUnchanged("bob edits alice's record") {
            assertFailure(s.ck("--as", "bob@example.com", "--db", "public", "record", "save", "--name", "p1", "--force", "text=hacked"),
                          exit: 5, contains: "ACCESS_DENIED")
            assertFailure(s.ck("--as", "bob@example.com", "--db", "public", "record", "delete", "p1"), exit: 5, contains: "ACCESS_DENIED")
        }
        XCTAssertEqual(s.run(["record", "get", "p1", "--db", "public"], env: ["CK_USER": "bob@example.com"]).status, 0, "bob can read it")
    }

    func testAsActsForOneCommandInSeparatePrivateDatabases() {
        let s = CLISandbox()
        s.ck("account", "signin", "bob@example.com")
        s.ck("account", "signin", "alice@example.com")
        XCTAssertEqual(s.ck("record", "save", "--type", "Note", "--name", "n", "owner=alice").status, 0)
        assertFailure(s.ck("--as", "bob@example.com", "record", "get", "n"), exit: 3)
        XCTAssertEqual(s.run(["record", "save", "--type", "Note", "--name", "n", "owner=bob"], env: ["CK_USER": "bob@example.com"]).status, 0)
        let alices = s.ck("record", "get", "n").record["fields"] as? [String: [String: Any]]
        XCTAssertEqual(alices?["owner"]?["value"] as? String, "alice")
        XCTAssertEqual(s.ck("account").object["appleID"] as? String, "alice@example.com", "--as does not change the device")
    }

    func testAccountBadInput() {
        let s = CLISandbox()
        s.signIn()
        s.assertUnchanged("bad account input") {
            assertFailure(s.ck("account", "signin", "not-an-email"), exit: 6, contains: "not a valid Apple ID")
            assertFailure(s.ck("account", "signin", "../x@example.com"), exit: 6)
            assertFailure(s.ck("account", "signin", "carol@example.com", "--phone", "12ab"), exit: 6, contains: "phone number")
            assertFailure(s.ck("account", "set-status", "sleepy"), exit: 2, contains: "unknown status 'sleepy'")
            assertFailure(s.ck("account", "signin"), exit: 2, contains: "missing Apple ID")
            assertFailure(s.ck("--as", "never@example.com", "record", "list"), exit: 5, contains: "never signed in")
            assertFailure(s.ck("user", "discover"), exit: 2)
            assertFailure(s.ck("user", "discover", "--record-name", "alice"), exit: 6)
            assertFailure(s.ck("permission", "request", "camera"), exit: 2, contains: "unknown permission")
            assertFailure(s.ck("account", "events", "--timeout", "1"), exit: 2)
            assertFailure(s.ck("account", "--bogus"), exit: 2)
        }
    }
}
