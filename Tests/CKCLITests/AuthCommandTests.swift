import CKCore
import CKTestSupport
import Foundation
import XCTest

/// `ck api-token`, `ck server-key` and `ck account web-auth-token` (issue 29, Docs/serve.md
/// "Tokens, keys and sign-in"): what each prints, the container and environment they act in,
/// and every refusal with its exit code, one stderr line and the data directory unchanged.
final class AuthCommandTests: XCTestCase {
    static let container = "iCloud.com.example.test"

    func fixture(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/auth/\(name)")
    }

    func testAPITokensAreMadeListedAndDeletedPerContainerAndEnvironment() throws {
        let s = CLISandbox()
        let made = s.ck("api-token", "create", "--name", "web app")
        XCTAssertEqual(made.status, 0, made.stderr)
        let token = try XCTUnwrap(made.object["apiToken"] as? String)
        XCTAssertEqual(token.count, 64)
        XCTAssertEqual(made.object["environment"] as? String, "development")
        XCTAssertEqual(made.object["name"] as? String, "web app")
        let prod = s.run(["--env", "production", "--container", "iCloud.com.example.other", "api-token", "create"])
        XCTAssertEqual(prod.object["containerIdentifier"] as? String, "iCloud.com.example.other")
        XCTAssertEqual(prod.object["environment"] as? String, "production")

        let list = s.ck("api-token", "list")
        XCTAssertEqual(((list.object["apiTokens"] as? [[String: Any]]) ?? []).compactMap { $0["apiToken"] as? String }, [token])
        XCTAssertEqual(s.run(["--format", "ndjson", "api-token", "list"]).stdout.split(separator: "\n").count, 1, "NDJSON: a token a line")
        // The server sees it.
        let c = try XCTUnwrap(made.object["containerIdentifier"] as? String)
        XCTAssertNoThrow(try api(s.dir).authenticate(WebCredentials(container: c, environment: .development, scope: .public, apiToken: token)))

        s.assertUnchanged("refusals") {
            assertFailure(s.ck("api-token", "delete", String(repeating: "0", count: 64)), exit: 3, contains: "no API token '00000000…'")
            assertFailure(s.ck("api-token", "delete", "nope"), exit: 6, contains: "64 lowercase hex")
            assertFailure(s.run(["--env", "production", "api-token", "delete", token]), exit: 3)
            assertFailure(s.ck("api-token", "delete"), exit: 2, contains: "missing API token")
            assertFailure(s.ck("api-token", "create", "extra"), exit: 2, contains: "unexpected argument")
            assertFailure(s.ck("api-token", "create", "--name", ""), exit: 6)
            assertFailure(s.ck("api-token", "list", "--bogus"), exit: 2)
        }
        let deleted = s.ck("api-token", "delete", token)
        XCTAssertEqual(deleted.status, 0, deleted.stderr)
        XCTAssertEqual(deleted.object["deleted"] as? Bool, true)
        XCTAssertEqual((s.ck("api-token", "list").object["apiTokens"] as? [Any])?.count, 0)
    }

    /// `--callback`: the token's sign-in callback (URL Redirect), kept with it and shown as
    /// `signInCallback`; what is not an absolute http(s) URL without a fragment is refused, and
    /// a file an older ck wrote (no callbacks) still loads.
    func testAnAPITokensSignInCallbackIsKeptShownAndChecked() throws {
        let s = CLISandbox()
        let file = s.dir + "/containers/iCloud.com.example.app/development/api-tokens.json"
        let old = String(repeating: "ab", count: 32)
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try #"{"schemaVersion":1,"apiTokens":[{"apiToken":"\#(old)","name":"old","created":1}]}"#.write(toFile: file, atomically: true, encoding: .utf8)

        let made = s.ck("api-token", "create", "--name", "cli", "--callback", "http://127.0.0.1:53821/callback?state=1")
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(made.object["signInCallback"] as? String, "http://127.0.0.1:53821/callback?state=1")
        XCTAssertEqual(made.object["name"] as? String, "cli")
        XCTAssertEqual(Set(made.object.keys), ["apiToken", "containerIdentifier", "environment", "name", "signInCallback", "created"])
        let listed = try XCTUnwrap(s.ck("api-token", "list").object["apiTokens"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["apiToken"] as? String }, [old, made.object["apiToken"] as? String], "the old token loads, and stays")
        XCTAssertEqual(listed.map { $0["signInCallback"] as? String }, [nil, "http://127.0.0.1:53821/callback?state=1"])
        XCTAssertNil(s.ck("api-token", "create").object["signInCallback"], "none unless asked")
        XCTAssertEqual(s.ck("api-token", "create", "--callback=https://App.example/cb").object["signInCallback"] as? String, "https://App.example/cb")

        s.assertUnchanged("refused callbacks") {
            for (url, words) in [("ftp://127.0.0.1/cb", "not an absolute http:// or https:// URL"), ("/callback", "not an absolute http"),
                                 ("127.0.0.1:8080/cb", "not an absolute http"), ("http://127.0.0.1/cb#done", "has a fragment"),
                                 ("http://", "names no host"), ("http:///cb", "names no host"), ("http://a b/cb", "a space (%20)"),
                                 ("http://127.0.0.1:99999/cb", "port"), ("http://127.0.0.1:/cb", "port"), ("http://me@127.0.0.1/cb", "names a user"),
                                 ("http://127.0.0.1/caf\u{e9}", "not ASCII"), ("", "must not be empty")] {
                assertFailure(s.ck("api-token", "create", "--callback", url), exit: 6, contains: words)
            }
            assertFailure(s.ck("api-token", "create", "--callback"), exit: 2)
        }
    }

    func testServerKeysAreRegisteredFromAPEMFileAndRefusedWhenNotP256() throws {
        let s = CLISandbox()
        let pem = fixture("server-key-public.pem").path
        // A key acts as the user who registers it: with none, nothing is registered.
        s.assertUnchanged("no account") {
            assertFailure(s.ck("server-key", "add", "key-1", "--public-key", pem), exit: 5, contains: "registering a server-to-server key")
            assertFailure(s.run(["--as", "bob@example.com", "server-key", "add", "key-1", "--public-key", pem]), exit: 5, contains: "never signed in on this device")
        }
        s.signIn("bob@example.com")
        s.signIn("alice@example.com")
        let added = s.ck("server-key", "add", "key-1", "--public-key", pem)
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(added.object["keyID"] as? String, "key-1")
        XCTAssertEqual(added.object["appleID"] as? String, "alice@example.com", "the device's account registers it")
        let bobs = s.run(["--as", "bob@example.com", "server-key", "add", "bobs-key", "--public-key", pem])
        XCTAssertEqual(bobs.object["appleID"] as? String, "bob@example.com", "--as names who registers it")
        XCTAssertEqual(s.ck("server-key", "delete", "bobs-key").status, 0)
        XCTAssertEqual(added.object["publicKey"] as? String, try String(contentsOfFile: pem, encoding: .utf8))
        let viaStdin = s.run(["server-key", "add", "key-2", "--public-key", "-"], stdin: try String(contentsOfFile: pem, encoding: .utf8))
        XCTAssertEqual(viaStdin.status, 0, viaStdin.stderr)
        XCTAssertEqual(((s.ck("server-key", "list").object["keys"] as? [[String: Any]]) ?? []).compactMap { $0["keyID"] as? String }, ["key-1", "key-2"])

        s.assertUnchanged("refusals") {
            assertFailure(s.ck("server-key", "add", "key-1", "--public-key", pem), exit: 4, contains: "already registered")
            assertFailure(s.ck("server-key", "add", "k", "--public-key", fixture("server-key-private.pem").path), exit: 6, contains: "private key")
            assertFailure(s.ck("server-key", "add", "k", "--public-key", fixture("secp384r1-public.pem").path), exit: 6, contains: "secp384r1")
            assertFailure(s.ck("server-key", "add", "k", "--public-key", fixture("rsa-public.pem").path), exit: 6, contains: "rsaEncryption")
            assertFailure(s.ck("server-key", "add", "k", "--public-key", "/no/such/file.pem"), exit: 6, contains: "no such file")
            assertFailure(s.ck("server-key", "add", "k"), exit: 2, contains: "missing --public-key")
            assertFailure(s.ck("server-key", "add", "--public-key", pem), exit: 2, contains: "missing key ID")
            assertFailure(s.ck("server-key", "add", "bad id", "--public-key", pem), exit: 6, contains: "key ID")
            assertFailure(s.ck("server-key", "delete", "key-9"), exit: 3, contains: "no server-to-server key 'key-9'")
            assertFailure(s.run(["--env", "production", "server-key", "delete", "key-1"]), exit: 3)
        }
        let deleted = s.ck("server-key", "delete", "key-1")
        XCTAssertEqual(deleted.status, 0, deleted.stderr)
        XCTAssertEqual(((s.ck("server-key", "list").object["keys"] as? [[String: Any]]) ?? []).count, 1)
    }

    func testWebAuthTokensSignTheDevicesAccountOrAnotherUserIn() throws {
        let s = CLISandbox()
        s.assertUnchanged("no account") {
            assertFailure(s.ck("account", "web-auth-token"), exit: 5, contains: "no iCloud account is signed in")
            assertFailure(s.run(["--as", "bob@example.com", "account", "web-auth-token"]), exit: 5, contains: "never signed in on this device")
        }
        s.signIn("bob@example.com")
        s.signIn("alice@example.com")
        let alice = s.ck("account", "web-auth-token")
        XCTAssertEqual(alice.status, 0, alice.stderr)
        let token = try XCTUnwrap(alice.object["ckWebAuthToken"] as? String)
        let bob = s.run(["--as", "bob@example.com", "account", "web-auth-token", "--keep-signed-in"])
        XCTAssertEqual(bob.status, 0, bob.stderr)
        let long = (bob.object["expires"] as? Int ?? 0) - (alice.object["expires"] as? Int ?? 0)
        XCTAssertGreaterThan(long, 13 * 24 * 3600 * 1000, "two weeks against thirty minutes")
        XCTAssertNotEqual(alice.object["userRecordName"] as? String, bob.object["userRecordName"] as? String)

        // The server takes it with an API token of the same container and environment.
        let key = try XCTUnwrap(s.ck("api-token", "create").object["apiToken"] as? String)
        let c = try XCTUnwrap(s.ck("api-token", "list").object["apiTokens"] as? [[String: Any]]).first?["containerIdentifier"] as? String ?? ""
        let who = try api(s.dir).authenticate(WebCredentials(container: c, environment: .development, scope: .private, apiToken: key, webAuthToken: token))
        XCTAssertEqual(who.user, .userRecordName(alice.object["userRecordName"] as? String ?? ""))
        // Signing out revokes it.
        XCTAssertEqual(s.ck("account", "signout").status, 0)
        XCTAssertEqual(try api(s.dir).authenticate(WebCredentials(container: c, environment: .development, scope: .private, apiToken: key, webAuthToken: token)).user, .nobody)
        assertFailure(s.ck("account", "web-auth-token", "extra"), exit: 2, contains: "unexpected argument")
    }

    /// `ck --as bob account signout` signs bob out — his web sessions end — and leaves the
    /// device's account (alice) as it is; a user's sessions are listed and ended by id or all.
    func testSigningOutTheUserNamedAndEndingTheirSessions() throws {
        let s = CLISandbox()
        s.signIn("bob@example.com")
        s.signIn("alice@example.com")
        let c = "iCloud.com.example.app"   // the default container
        let key = try XCTUnwrap(s.ck("api-token", "create").object["apiToken"] as? String)
        func user(_ token: String) throws -> Caller.User {
            try api(s.dir).authenticate(WebCredentials(container: c, environment: .development, scope: .private, apiToken: key, webAuthToken: token)).user
        }
        let bobsToken = try XCTUnwrap(s.run(["--as", "bob@example.com", "account", "web-auth-token"]).object["ckWebAuthToken"] as? String)
        let alicesToken = try XCTUnwrap(s.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)

        let out = s.run(["--as", "bob@example.com", "account", "signout"])
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertEqual(out.object["status"] as? String, "available", "the device's account, still alice's")
        XCTAssertEqual(out.object["appleID"] as? String, "alice@example.com")
        XCTAssertEqual((out.object["signedOut"] as? [String: Any])?["appleID"] as? String, "bob@example.com")
        XCTAssertEqual((out.object["signedOut"] as? [String: Any])?["webSessionsEnded"] as? Int, 1)
        XCTAssertEqual(try user(bobsToken), .nobody, "bob's token is dead")
        XCTAssertNotEqual(try user(alicesToken), .nobody, "alice's is not")
        XCTAssertEqual(s.ck("account").object["appleID"] as? String, "alice@example.com")

        // Listed and ended.
        let second = try XCTUnwrap(s.ck("account", "web-auth-token", "--keep-signed-in").object["ckWebAuthToken"] as? String)
        let listed = s.ck("account", "sessions")
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let sessions = try XCTUnwrap(listed.object["sessions"] as? [[String: Any]])
        XCTAssertEqual(sessions.count, 2)
        XCTAssertEqual(sessions.map { $0["keepSignedIn"] as? Bool }, [false, true])
        XCTAssertFalse(listed.stdout.contains(alicesToken) || listed.stdout.contains(second), "no token is shown")
        let first = try XCTUnwrap(sessions[0]["id"] as? String)
        XCTAssertEqual(s.run(["--format", "ndjson", "account", "sessions"]).stdout.split(separator: "\n").count, 2, "NDJSON: a session a line")
        XCTAssertEqual((s.run(["--as", "bob@example.com", "account", "sessions"]).object["sessions"] as? [Any])?.count, 0)
        s.assertUnchanged("refusals") {
            assertFailure(s.ck("account", "sessions", "end"), exit: 2, contains: "missing session ID (or --all)")
            assertFailure(s.ck("account", "sessions", "end", first, "--all"), exit: 2, contains: "not both")
            assertFailure(s.ck("account", "sessions", "end", "0123456789abcdef"), exit: 3, contains: "no web session '0123456789abcdef'")
            assertFailure(s.run(["--as", "bob@example.com", "account", "sessions", "end", first]), exit: 3, contains: "bob@example.com has no web session")
            assertFailure(s.ck("account", "sessions", "end", "nope"), exit: 6, contains: "not a session id")
            assertFailure(s.ck("account", "sessions", "extra"), exit: 2, contains: "unexpected argument")
        }
        let ended = s.ck("account", "sessions", "end", first)
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.object["ended"] as? [String], [first])
        XCTAssertEqual(try user(alicesToken), .nobody)
        XCTAssertNotEqual(try user(second), .nobody)
        XCTAssertEqual(s.ck("account", "sessions", "end", "--all").status, 0)
        XCTAssertEqual(try user(second), .nobody)
        XCTAssertEqual(s.ck("account").object["status"] as? String, "available", "ending sessions leaves the device signed in")
        XCTAssertTrue(s.ck("account", "sessions", "end", "--help").stdout.contains("ID | --all"))
    }
}
