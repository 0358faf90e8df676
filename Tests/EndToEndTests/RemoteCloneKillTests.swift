import CKTestSupport
import Foundation
import XCTest

/// `ck clone` from a `ck serve` process, killed with SIGKILL at random pages, then `ck pull`:
/// the same store as a clone never interrupted, and no page fetched twice — every page is
/// saved with its cursor as it arrives.
final class RemoteCloneKillTests: XCTestCase {
    func testAKilledCloneResumesWithAPullAndFetchesNothingTwice() throws {
        let server = Sandbox()
        server.signIn()
        XCTAssertEqual(server.ck("zone", "create", "Lists").status, 0)
        let lines = (0..<2000).map { i in #"{"recordName":"item-\#(i)","recordType":"Item","fields":{"n":{"value":\#(i)}},"zoneID":{"zoneName":"Lists"}}"# }
        XCTAssertEqual(server.run(["import"], stdin: lines.joined(separator: "\n")).status, 0)
        let token = try XCTUnwrap(server.ck("api-token", "create").object["apiToken"] as? String)
        let session = try XCTUnwrap(server.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)
        let serve = try ServeProcess(server)
        defer { _ = serve.stop() }
        let url = serve.url + "/database/1/iCloud.com.example.app/development"
        let env = ["CLOUDKIT_API_TOKEN": token, "CLOUDKIT_WEB_AUTH_TOKEN": session]

        let client = Sandbox()
        let dir = client.root.appendingPathComponent("App").path
        var rng = SystemRandomNumberGenerator()
        let delay = Double.random(in: 0.02...0.6, using: &rng)
        let l = client.launch(["clone", url, dir], env: env)
        usleep(useconds_t(delay * 1_000_000))
        kill(l.process.processIdentifier, SIGKILL)
        _ = l.collect()
        let data = ["--data-dir", dir + "/.ck"]
        // What the killed clone saved: its pages, with their cursor.
        let shown = client.run(data + ["remote", "show", "origin"], env: env)
        let saved = (shown.object["zones"] as? [[String: Any]])?.first { $0["zoneName"] as? String == "Lists" }?["records"] as? Int ?? 0
        // Killed before its first page was saved, the clone is run again and takes up where it
        // was; after, a pull goes on.
        let pull = saved == 0 ? client.run(["clone", url, dir], env: env) : client.run(data + ["pull"], env: env)
        XCTAssertEqual(pull.status, 0, pull.stderr)
        let fetched = (pull.object["fetched"] as? [String: Any])?["records"] as? Int ?? -1
        XCTAssertEqual(saved + fetched, 2000, "killed after \(delay) s with \(saved) records saved: a pull fetches the rest, and nothing twice")
        let listed = client.run(data + ["record", "list", "--zone", "Lists", "--format", "ndjson"], env: env)
        XCTAssertEqual(listed.stdout.split(separator: "\n").count, 2000)
        XCTAssertEqual(client.run(data + ["fsck"]).status, 0)
    }
}
