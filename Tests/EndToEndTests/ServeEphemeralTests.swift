import CKTestSupport
import Foundation
import XCTest

/// `ck serve --ephemeral [--seed FILE]` and `--snippet`: what a test suite and a web page need
/// from one command, and nothing left behind.
final class ServeEphemeralTests: XCTestCase {
    /// A sandbox whose temporary directory is its own, to see what an ephemeral server leaves.
    func sandbox() throws -> (Sandbox, URL) {
        let s = Sandbox()
        // Beside the sandbox, not in it: the sandbox's snapshot must not see the server's files.
        let tmp = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ck-tmpdir-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: tmp) }
        s.environment["TMPDIR"] = tmp.path
        s.environment["CK_CONTAINER"] = "iCloud.com.example.ephemeral"
        return (s, tmp)
    }

    func leftIn(_ dir: URL) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? ["unreadable"] }

    func testAnEphemeralServerIsReadyForATestSuiteAndLeavesNothing() throws {
        let (s, tmp) = try sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("record", "save", "--type", "Item", "--name", "seeded-1", "title=one").status, 0)
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", "seeded-2", "title=two").status, 0)
        let export = s.ck("export")
        XCTAssertEqual(export.status, 0)
        let before = s.snapshot()
        let seed = tmp.deletingLastPathComponent().appendingPathComponent(tmp.lastPathComponent + ".ndjson")
        try Data(export.stdout.utf8).write(to: seed)
        addTeardownBlock { try? FileManager.default.removeItem(at: seed) }

        let serve = try ServeProcess(s, ["--ephemeral", "--seed", seed.path])
        let a = serve.announcement
        let dir = try XCTUnwrap(a["dataDirectory"] as? String)
        XCTAssertTrue(dir.hasPrefix(tmp.path + "/ck-ephemeral-"), dir)
        XCTAssertEqual(a["containerIdentifier"] as? String, "iCloud.com.example.ephemeral")
        XCTAssertEqual(a["environment"] as? String, "development")
        XCTAssertEqual(a["seeded"] as? Int, 2)
        let token = try XCTUnwrap(a["apiToken"] as? String)
        let session = try XCTUnwrap(a["ckWebAuthToken"] as? String)
        let base = "/database/1/iCloud.com.example.ephemeral/development"
        let auth = "ckAPIToken=\(token)&ckWebAuthToken=\(session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? session)"
        let caller = try serve.client().request("GET", "\(base)/public/users/caller?\(auth)")
        XCTAssertEqual(caller.status, 200)
        XCTAssertEqual(caller["userRecordName"] as? String, a["userRecordName"] as? String)
        // The seed's records, in their zones, belong to the test user.
        let lookup = try serve.client().request("POST", "\(base)/private/records/lookup?\(auth)",
                                                json: #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"seeded-2"}]}"#)
        XCTAssertEqual(((lookup["records"] as? [[String: Any]])?.first?["fields"] as? [String: [String: Any]])?["title"]?["value"] as? String, "two")
        // The sandbox's own data directory is not the one served, and is untouched.
        XCTAssertNotEqual(URL(fileURLWithPath: dir).resolvingSymlinksInPath().path, s.dataDir.resolvingSymlinksInPath().path)
        XCTAssertEqual(s.snapshot(), before)

        let stopped = serve.stop(SIGTERM)
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir), "the ephemeral data directory is removed on exit")
        XCTAssertEqual(leftIn(tmp), [])
    }

    func testABadSeedStartsNothingAndLeavesNothing() throws {
        let (s, tmp) = try sandbox()
        let bad = s.root.appendingPathComponent("bad.ndjson")
        try Data("{\"recordName\": \"x\", \"recordType\": 7}\n".utf8).write(to: bad)
        let r = s.ck("serve", "--port", "0", "--ephemeral", "--seed", bad.path)
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertEqual(r.stdout, "", "no announcement: nothing is served")
        XCTAssertEqual(leftIn(tmp), [])
        let missing = s.ck("serve", "--port", "0", "--ephemeral", "--seed", s.root.appendingPathComponent("nowhere").path)
        XCTAssertEqual(missing.status, 6, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("no such file"), missing.stderr)
        XCTAssertEqual(leftIn(tmp), [])
    }

    func testTheSnippetPointsAPageAtThisServerWithATokenOfTheContainer() throws {
        let (s, _) = try sandbox()
        let serve = try ServeProcess(s, ["--snippet"])
        // The snippet's token was made for the container (it had none), and is a token here.
        let tokens = s.ck("api-token", "list").object["apiTokens"] as? [[String: Any]] ?? []
        XCTAssertEqual(tokens.count, 1)
        let token = try XCTUnwrap(tokens.first?["apiToken"] as? String)
        XCTAssertEqual(tokens.first?["name"] as? String, "ck serve")
        let script = try serve.client().request("GET", "/ck/cloudkit-config.js")
        XCTAssertEqual(script.status, 200)
        XCTAssertTrue(script.text.contains("var server = \"\(serve.url)\";"), script.text)
        let stopped = serve.stop()
        XCTAssertTrue(stopped.stderr.contains("<script src=\"\(serve.url)/ck/cloudkit-config.js\"></script>"), stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("apiToken: \"\(token)\""), stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("containerIdentifier: \"iCloud.com.example.ephemeral\""), stopped.stderr)
        // A second server reuses the container's token rather than making another.
        let again = try ServeProcess(s, ["--snippet"])
        _ = again.stop()
        XCTAssertEqual((s.ck("api-token", "list").object["apiTokens"] as? [Any])?.count, 1)
    }
}
