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

    /// A served data directory with alice signed in, an API token and a web auth token of hers.
    func servedWithSession() throws -> (server: Sandbox, serve: ServeProcess, apiToken: String, session: String) {
        let server = Sandbox()
        server.signIn()
        let token = try XCTUnwrap(server.ck("api-token", "create").object["apiToken"] as? String)
        let session = try XCTUnwrap(server.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)
        return (server, try ServeProcess(server), token, session)
    }

    func testASignedOutSessionSaysToLogInAgain() throws {
        let (server, serve, token, session) = try servedWithSession()
        defer { _ = serve.stop() }
        XCTAssertEqual(server.ck("zone", "create", "Lists").status, 0)
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

    /// Runs ck on a pseudo-terminal of its own (its controlling terminal, so /dev/tty is it):
    /// waits for `prompt`, types `typed`, and reports everything the terminal showed, the exit
    /// status, and whether echo was on once ck had ended. Nil without python3.
    func onTerminal(_ args: [String], env: [String: String], prompt: String, typed: [UInt8]) throws -> (shown: String, status: Int, echoAfter: Bool)? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return nil }
        let script = """
        import fcntl, json, os, pty, select, subprocess, sys, termios, time
        args, env, prompt, typed = json.loads(sys.argv[1])
        master, slave = pty.openpty()
        def own_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        p = subprocess.Popen(args, env=env, stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal)
        shown = b""
        def drain(until=None, seconds=20):
            global shown
            end = time.time() + seconds
            while time.time() < end:
                if until is not None and until in shown: return
                r, _, _ = select.select([master], [], [], 0.1)
                if r:
                    try: chunk = os.read(master, 4096)
                    except OSError: return
                    if not chunk: return
                    shown += chunk
                elif until is None and p.poll() is not None: return
        drain(prompt.encode())
        time.sleep(0.2)
        os.write(master, bytes(typed))
        drain()
        status = p.wait(timeout=20)
        echo = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
        print(json.dumps({"shown": shown.decode("utf-8", "replace"), "status": status, "echo": echo}))
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let input = try JSONSerialization.data(withJSONObject: [[Sandbox.binary.path] + args, env, prompt, typed.map(Int.init)])
        p.arguments = ["-c", script, String(decoding: input, as: UTF8.self)]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], String(decoding: data, as: UTF8.self))
        return (o["shown"] as? String ?? "", o["status"] as? Int ?? -999, o["echo"] as? Bool ?? false)
    }

    /// `--paste` reads the token from the terminal with echo off, and puts echo back — also when
    /// Ctrl-C ends it midway.
    func testPasteReadsTheTokenFromTheTerminalUnshownAndLeavesEchoOn() throws {
        let (server, serve, token, session) = try servedWithSession()
        // The server's sandbox (its data directory) lives as long as its ck serve.
        defer { withExtendedLifetime(server) { _ = serve.stop() } }
        let url = serve.url + "/database/1/iCloud.com.example.app/development"
        let client = Sandbox()
        let args = ["remote", "login", url, "--api-token", token, "--paste"]
        guard let typed = try onTerminal(args, env: client.environment, prompt: "Web auth token", typed: Array((session + "\n").utf8)) else {
            throw XCTSkip("python3 is not installed")
        }
        XCTAssertEqual(typed.status, 0, typed.shown)
        XCTAssertTrue(typed.shown.contains("userRecordName"), typed.shown)
        XCTAssertFalse(typed.shown.contains(session), "the token typed was shown: \(typed.shown)")
        XCTAssertTrue(typed.echoAfter, "echo is back on")
        let creds = try String(contentsOfFile: client.root.appendingPathComponent(".config/ck/credentials.json").path, encoding: .utf8)
        XCTAssertTrue(creds.contains(session), "the session typed is stored")
        // Ctrl-C at the prompt: ck ends by the signal, and the terminal echoes again.
        let other = Sandbox()
        let interrupted = try XCTUnwrap(try onTerminal(args, env: other.environment, prompt: "Web auth token", typed: [0x03]))
        XCTAssertNotEqual(interrupted.status, 0, interrupted.shown)
        XCTAssertTrue(interrupted.echoAfter, "Ctrl-C left the terminal without echo")
        XCTAssertFalse(FileManager.default.fileExists(atPath: other.root.appendingPathComponent(".config/ck/credentials.json").path), "nothing stored")
    }
}
