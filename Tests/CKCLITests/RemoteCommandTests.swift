import CKTestSupport
import Foundation
import XCTest

/// `ck remote …` in-process: naming remotes, refusing what is not a remote, and the commands
/// that would reach one refusing what they must before any request (production without --yes).
/// (What talks to a server is CKRemoteTests, against ck serve.)
final class RemoteCommandTests: XCTestCase {
    let url = "http://127.0.0.1:9/database/1/iCloud.com.example.app/development"

    func testAddListShowRenameRemove() throws {
        let s = CLISandbox()
        let added = s.run("remote", "add", "origin", url + "/")
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(added.object["url"] as? String, url, "kept in its canonical spelling")
        XCTAssertEqual(added.object["containerIdentifier"] as? String, "iCloud.com.example.app")
        XCTAssertNil(added.object["production"])
        XCTAssertEqual(s.run("remote", "add", "prod", "https://api.apple-cloudkit.com/database/1/iCloud.com.example.app/production").object["production"] as? Bool, true)
        XCTAssertEqual((s.run("remote", "list").object["remotes"] as? [[String: Any]])?.map { $0["name"] as? String }, ["origin", "prod"])
        let shown = s.run("remote", "show", "origin")
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertEqual((shown.object["zones"] as? [Any])?.count, 0)
        XCTAssertEqual(shown.object["secretsIn"] as? String, "file", "on Linux the tokens are in the 0600 file")
        XCTAssertEqual(s.run("remote", "rename", "origin", "upstream").object["name"] as? String, "upstream")
        assertFailure(s.run("remote", "show", "origin"), exit: 3, contains: "no remote named 'origin'")
        XCTAssertEqual(s.run("remote", "remove", "upstream").status, 0)
        XCTAssertEqual((s.run("remote", "list").object["remotes"] as? [[String: Any]])?.map { $0["name"] as? String }, ["prod"])
    }

    func testWhatIsNotARemoteIsRefusedAndChangesNothing() {
        let s = CLISandbox()
        XCTAssertEqual(s.run("remote", "add", "origin", url).status, 0)
        s.assertUnchanged("refused remote commands") {
            assertFailure(s.run("remote", "add", "origin", url), exit: 4, contains: "already exists")
            assertFailure(s.run("remote", "add", "other", "ftp://x/database/1/iCloud.x/development"), exit: 2, contains: "https://")
            assertFailure(s.run("remote", "add", "other", "https://x/database/1/iCloud.x/development/private"), exit: 2, contains: "--db")
            assertFailure(s.run("remote", "add", "-bad", url), exit: 2)
            assertFailure(s.run("remote", "add", "a/b", url), exit: 2, contains: "not a remote name")
            assertFailure(s.run("remote", "add", "only-name"), exit: 2)
            assertFailure(s.run("remote", "rename", "origin", "bad name"), exit: 2, contains: "not a remote name")
            assertFailure(s.run("remote", "rename", "nope", "x"), exit: 3)
            assertFailure(s.run("remote", "remove", "nope"), exit: 3)
        }
    }

    func testAWriteToProductionNeedsYesBeforeAnyRequest() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run("remote", "add", "prod", "http://127.0.0.1:9/database/1/iCloud.com.example.app/production").status, 0)
        assertFailure(s.run("push", "prod"), exit: 2, contains: "--yes")
        // With --yes it goes on, and fails only at the network (nothing listens on port 9).
        let r = s.run("push", "prod", "--yes", env: ["CLOUDKIT_API_TOKEN": "t", "CLOUDKIT_WEB_AUTH_TOKEN": "w"])
        XCTAssertNotEqual(r.status, 2, r.stderr)
    }

    func testPullWithoutARemoteOrCredentialsSaysWhatToDo() {
        let s = CLISandbox()
        s.signIn()
        assertFailure(s.run("pull"), exit: 2, contains: "ck remote add")
        XCTAssertEqual(s.run("remote", "add", "origin", url).status, 0)
        assertFailure(s.run("pull"), exit: 5, contains: "ck remote login origin")
        assertFailure(s.run("pull", "--theirs", "--ours"), exit: 2, contains: "choose one")
    }

    func testACloneNeverWritesIntoAnExistingDataDirectory() throws {
        let s = CLISandbox()
        let target = s.root.appendingPathComponent("App/.ck").path
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        assertFailure(s.run("clone", url, s.root.appendingPathComponent("App").path), exit: 2, contains: "already exists")
        assertFailure(s.run("clone", "ftp://nowhere"), exit: 2)
    }

    func testKeyCreateWritesAPrivateKeyOutsideTheDataDirectory() throws {
        let s = CLISandbox()
        let r = s.run("remote", "key", "create", "https://api.apple-cloudkit.com/database/1/iCloud.com.example.app/development")
        XCTAssertEqual(r.status, 0, r.stderr)
        let path = try XCTUnwrap(r.object["privateKeyPath"] as? String)
        XCTAssertTrue(path.hasPrefix(s.root.path + "/.config/ck/keys/"), path)
        XCTAssertFalse(path.hasPrefix(s.dir), "no secret lands in the data directory")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int), 0o600)
        XCTAssertTrue((r.object["publicKey"] as? String)?.hasPrefix("-----BEGIN PUBLIC KEY-----") == true)
        XCTAssertFalse(r.stdout.contains("PRIVATE KEY"), "the private key is never printed")
        let set = s.run("remote", "key", "set", "https://api.apple-cloudkit.com/database/1/iCloud.com.example.app/development", "--key-id", "abc123")
        XCTAssertEqual(set.status, 0, set.stderr)
        assertFailure(s.run("remote", "key", "set", "https://api.apple-cloudkit.com/database/1/iCloud.com.example.app/development", "--key-id", "abc", "--private-key", "/nonexistent.pem"), exit: 2, contains: "cannot read")
    }
}
