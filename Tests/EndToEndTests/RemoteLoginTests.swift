import CKTestSupport
import Foundation
import XCTest

/// `ck remote login` end to end: ck asks a `ck serve` for the sign-in page (421 with a
/// redirectURL), listens on loopback for the API token's URL Redirect callback, and curl
/// stands in for the browser — it signs in on the page and follows the 302 into ck's listener.
final class RemoteLoginTests: XCTestCase {
    func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: a.sin_port))
    }

    func curl(_ args: [String]) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = ["-s"] + args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testLoginThroughTheLoopbackCallbackStoresAWorkingSession() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { throw XCTSkip("curl is missing (Debian: curl)") }
        let server = Sandbox()
        server.signIn()
        let port = freePort()
        let token = try XCTUnwrap(server.ck("api-token", "create", "--callback", "http://127.0.0.1:\(port)/").object["apiToken"] as? String)
        let serve = try ServeProcess(server)
        defer { _ = serve.stop() }
        let url = serve.url + "/database/1/iCloud.com.example.app/development"

        let client = Sandbox()
        let login = client.launch(["remote", "login", url, "--api-token", token, "--no-browser", "--port", String(port), "--timeout", "30"])
        // The page the 421 names, as a browser would open it.
        let redirect = try curl([url + "/public/users/caller?ckAPIToken=" + token]).out
        let page = try XCTUnwrap((try? JSONSerialization.jsonObject(with: Data(redirect.utf8)) as? [String: Any])?["redirectURL"] as? String)
        // Signing in there answers 302 to ck's listener, which curl follows (once it listens).
        var followed = ""
        for _ in 0..<100 {
            let r = try curl(["-L", "--data-urlencode", "appleID=alice@example.com", "-d", "keepSignedIn=true", page])
            followed = r.out
            if r.status == 0 { break }
            usleep(100_000)
        }
        XCTAssertTrue(followed.contains("Signed in"), followed)
        XCTAssertFalse(followed.contains("ckWebAuthToken"), "the page the browser ends on holds no token")
        let r = login.collect()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue((r.object["userRecordName"] as? String)?.hasPrefix("_") == true, r.stdout)
        // The stored session reaches the private database: a clone works with no token given.
        XCTAssertEqual(server.ck("zone", "create", "Lists").status, 0)
        let clone = client.run(["clone", url, client.root.appendingPathComponent("App").path])
        XCTAssertEqual(clone.status, 0, clone.stderr)
        let creds = try String(contentsOfFile: client.root.appendingPathComponent(".config/ck/credentials.json").path, encoding: .utf8)
        XCTAssertTrue(creds.contains(token))
        XCTAssertFalse(clone.stdout.contains(token) || clone.stderr.contains(token), "no secret in the output")
    }

    func testASignedOutSessionSaysToLogInAgain() throws {
        let server = Sandbox()
        server.signIn()
        XCTAssertEqual(server.ck("zone", "create", "Lists").status, 0)
        let token = try XCTUnwrap(server.ck("api-token", "create").object["apiToken"] as? String)
        let session = try XCTUnwrap(server.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)
        let serve = try ServeProcess(server)
        defer { _ = serve.stop() }
        let url = serve.url + "/database/1/iCloud.com.example.app/development"
        let client = Sandbox()
        let login = client.run(["remote", "login", url, "--api-token", token, "--with-token"], stdin: session)
        XCTAssertEqual(login.status, 0, login.stderr)
        let dir = client.root.appendingPathComponent("App").path
        XCTAssertEqual(client.run(["clone", url, dir]).status, 0)
        XCTAssertEqual(server.ck("account", "sessions", "end", "--all").status, 0)
        let pull = client.run(["--data-dir", dir + "/.ck", "pull"])
        assertFailure(pull, exit: 5, contains: "ck remote login origin")
    }
}
