import CKTestSupport
import Foundation
import XCTest

/// `ck console` and the console of `ck serve` as processes: the URL in the JSON line, the
/// browser started with it, and the console driven in headless Chromium
/// (Tests/Browser/console_flows.py), which saves its screenshots under
/// `.build/console-screenshots/` (Docs/console.md shows them).
final class ConsoleTests: XCTestCase {
    static let container = "iCloud.com.example.console"

    func testConsoleNoBrowserPrintsTheURLAndServesTheConsole() throws {
        let s = Sandbox()
        _ = s.ck("account", "signin", "alice@example.com")
        let serve = try ServeProcess(s, ["--no-browser"], command: ["console"])
        let console = try XCTUnwrap(serve.announcement["console"] as? String)
        XCTAssertTrue(console.hasPrefix(serve.url + "/console/#key="), console)
        let key = String(console.split(separator: "=").last!)
        XCTAssertEqual(try serve.client().request("GET", "/console/api/overview", headers: [("X-CK-Console", key)]).status, 200)
        XCTAssertEqual(try serve.client().request("GET", "/console/api/overview").status, 403)
        let stopped = serve.stop()
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertFalse(stopped.stderr.contains(String(console.split(separator: "=").last!)), "the token is never logged: \(stopped.stderr)")
    }

    func testConsoleOpensTheURLInTheBrowserBROWSERNamesThroughAFileOfTheUsersOwn() throws {
        let s = Sandbox()
        let (serve, page) = try Self.consoleWithFakeBrowser(s)
        let console = try XCTUnwrap(serve.announcement["console"] as? String)
        // The browser's arguments (public on the machine) hold a file, not the key.
        XCTAssertFalse(page.contains("#key="), page)
        XCTAssertTrue(page.hasSuffix("/console.html"), page)
        let text = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(text.contains(#"<meta http-equiv="refresh" content="0;url=\#(console)">"#), text)
        let mode = try FileManager.default.attributesOfItem(atPath: page)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let dirMode = try FileManager.default.attributesOfItem(atPath: (page as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        XCTAssertEqual(dirMode, 0o700)
        let stopped = serve.stop()
        XCTAssertEqual(stopped.status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: page), "removed when the server stops")
        // Where a sandboxed browser finds no file, the person is told what to open instead.
        XCTAssertTrue(stopped.stderr.contains("opened the console in a browser through \(page)"), stopped.stderr)
        XCTAssertFalse(stopped.stderr.contains("#key="), "the key is not logged: \(stopped.stderr)")
    }

    /// `ck console` with $BROWSER a script that notes what it was asked to open: the server, and
    /// the path it was given.
    static func consoleWithFakeBrowser(_ s: Sandbox) throws -> (ServeProcess, String) {
        let opened = s.root.appendingPathComponent("opened.txt").path
        let browser = s.root.appendingPathComponent("fake-browser").path
        try "#!/bin/sh\nprintf '%s' \"$1\" > '\(opened).part' && mv '\(opened).part' '\(opened)'\n".write(toFile: browser, atomically: true, encoding: .utf8)
        chmod(browser, 0o755)
        let serve = try ServeProcess(s, [], command: ["console"], environment: ["BROWSER": browser, "TMPDIR": s.root.path])
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: opened), Date() < deadline { usleep(20_000) }
        return (serve, try String(contentsOfFile: opened, encoding: .utf8))
    }

    func testConsoleWithoutABrowserToOpenWarnsAndKeepsServing() throws {
        let s = Sandbox()
        let serve = try ServeProcess(s, [], command: ["console"], environment: ["BROWSER": "/nonexistent/browser"])
        XCTAssertNotNil(serve.announcement["console"] as? String)
        XCTAssertEqual(try serve.client().request("GET", "/console/api/overview").status, 403)
        let stopped = serve.stop()
        XCTAssertEqual(stopped.status, 0)
        XCTAssertTrue(stopped.stderr.contains("no browser to open"), stopped.stderr)
    }

    func testAnEphemeralConsoleServesAFreshStoreAndRemovesIt() throws {
        let s = Sandbox()
        let serve = try ServeProcess(s, ["--no-browser", "--ephemeral"], command: ["console"])
        let dir = try XCTUnwrap(serve.announcement["dataDirectory"] as? String)
        XCTAssertNotEqual(dir, s.dataDir.path)
        XCTAssertNotNil(serve.announcement["apiToken"] as? String)
        let console = try XCTUnwrap(serve.announcement["console"] as? String)
        let overview = try serve.client().request("GET", "/console/api/overview", headers: [("X-CK-Console", String(console.split(separator: "=").last!))])
        XCTAssertTrue(overview.text.contains("test@example.com"), overview.text)
        XCTAssertEqual(serve.stop().status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir), "removed on exit")
    }

    func testServeAnnouncesTheConsole() throws {
        let s = Sandbox()
        let serve = try ServeProcess(s)
        XCTAssertTrue((serve.announcement["console"] as? String)?.hasPrefix(serve.url + "/console/#key=") == true, "\(serve.announcement)")
        XCTAssertEqual(serve.stop().status, 0)
    }

    /// The flows a person goes through, in Chromium and in Firefox: refused without the key;
    /// opened with it from the launch page; a page of another origin kept out; to a zone, its
    /// missing index added, sorted, filtered; a record read, edited (an INT64 beyond 2^53
    /// kept), created, deleted; a conflict with a CLI write resolved both ways; another user's
    /// view; a change's diff, a blame, the zone at a tag and a diff with it; a restore's preview,
    /// a stale one refused, and a revert; a fault armed and seen firing in the live request
    /// log; the schema deployed after a preview; a notification of a CLI write, and the records
    /// table following one; a participant who sees only what is shared; users, shares and
    /// subscriptions; hostile addresses; a phone's width.
    func testTheConsoleInABrowser() throws {
        _ = try BrowserTests.browser()
        try consoleFlows(engine: "chromium", shots: ".build/console-screenshots")
    }

    func testTheConsoleInFirefox() throws {
        _ = try BrowserTests.browser()
        try consoleFlows(engine: "firefox", shots: ".build/console-screenshots/firefox")
    }

    func consoleFlows(engine: String, shots: String) throws {
        let s = Sandbox()
        let c = ["--container", Self.container]
        XCTAssertEqual(s.ck("account", "signin", "bob@example.com").status, 0)
        XCTAssertEqual(s.ck("account", "signin", "alice@example.com").status, 0)
        XCTAssertEqual(s.run(c + ["zone", "create", "Lists"]).status, 0)
        for i in 1...3 {
            let r = s.run(c + ["--zone", "Lists", "record", "save", "--type", "ToDo", "--name", "todo-\(i)", "title=Item \(i)", "priority=\(i)"])
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        XCTAssertEqual(s.run(c + ["tag", "create", "v1"]).status, 0)
        XCTAssertEqual(s.run(c + ["subscribe", "zone", "--zone", "Lists", "--id", "lists-changes"]).status, 0)
        // Bob is a participant of todo-1's share, and of nothing else.
        XCTAssertEqual(s.run(c + ["--zone", "Lists", "share", "create", "todo-1", "--participant", "bob@example.com:readOnly"]).status, 0)
        let shares = s.run(c + ["--zone", "Lists", "share", "list"])
        let guid = try XCTUnwrap(((shares.object["records"] as? [[String: Any]])?.first?["shortGUID"]) as? String, shares.stdout)
        XCTAssertEqual(s.run(c + ["--as", "bob@example.com", "share", "accept", guid]).status, 0)
        // As a person starts it: `ck console`, which opens its launch page in the browser.
        let (serve, launcher) = try Self.consoleWithFakeBrowser(s)
        let console = try XCTUnwrap(serve.announcement["console"] as? String)
        let folder = BrowserTests.repo.appendingPathComponent(shots).path
        let result = try BrowserTests.run("console_flows.py", [console, Sandbox.binary.path, s.dataDir.path, Self.container, folder, launcher],
                                          environment: ["CK_BROWSER": engine])
        let stopped = serve.stop()
        if result.status == 77 { throw XCTSkip("needs \(engine), its WebDriver and python3's selenium (.ci/run installs them)") }
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.pages.filter { ($0["ok"] as? Bool) != true }.count, 0, result.output)
        XCTAssertGreaterThanOrEqual(result.pages.count, 30, result.output)
        XCTAssertFalse(stopped.stderr.contains(String(console.split(separator: "=").last!)), "the token is never logged")
    }
}
