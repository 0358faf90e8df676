import CKTestSupport
import Foundation
import XCTest

/// ck serve's pages and scripts in a real browser: headless Chromium driven by Selenium
/// (Debian's chromium, chromium-driver and python3-selenium, which .ci/run installs). Skipped
/// when they are missing. Apple's cloudkit.js joins in when a copy is at `$CK_CLOUDKIT_JS` or
/// `.scratch/cloudkit.js` (its licence forbids committing one).
final class BrowserTests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `python3` with Selenium, when Chromium and its driver are there too.
    static func browser() throws -> String {
        let fm = FileManager.default
        guard ["/usr/bin/chromium", "/usr/bin/chromium-browser"].contains(where: fm.isExecutableFile(atPath:)),
              fm.isExecutableFile(atPath: "/usr/bin/chromedriver"),
              fm.fileExists(atPath: "/usr/lib/python3/dist-packages/selenium") else {
            throw XCTSkip("needs Debian's chromium, chromium-driver and python3-selenium")
        }
        return "/usr/bin/python3"
    }

    /// Runs a script of Tests/Browser; its stdout's JSON lines, each `{page, ok, detail}`.
    /// `environment` is added to this process's (CK_BROWSER=firefox: in Firefox).
    static func run(_ script: String, _ args: [String], environment: [String: String] = [:]) throws -> (status: Int32, pages: [[String: Any]], output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try browser())
        p.arguments = [repo.appendingPathComponent("Tests/Browser/\(script)").path] + args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let timer = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 180, execute: timer)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        timer.cancel()
        let pages = stdout.split(separator: 0x0A).compactMap { (try? JSONSerialization.jsonObject(with: Data($0))) as? [String: Any] }
        return (p.terminationStatus, pages, String(decoding: stdout + stderr, as: UTF8.self))
    }

    func testTheConfigScriptPointsCloudKitJSAtTheServerInABrowser() throws {
        _ = try Self.browser()
        let s = Sandbox()
        let serve = try ServeProcess(s, ["--ephemeral"])
        let a = serve.announcement
        var args = [serve.url] + ["containerIdentifier", "apiToken", "ckWebAuthToken", "userRecordName"].map { a[$0] as? String ?? "" }
        let copy = ProcessInfo.processInfo.environment["CK_CLOUDKIT_JS"] ?? Self.repo.appendingPathComponent(".scratch/cloudkit.js").path
        if FileManager.default.fileExists(atPath: copy) { args.append(copy) }
        let result = try Self.run("config_script.py", args)
        _ = serve.stop()
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.pages.filter { ($0["ok"] as? Bool) != true }.count, 0, result.output)
        XCTAssertGreaterThanOrEqual(result.pages.count, 2, result.output)
    }

    /// Apple's CloudKit JS in a page hooked up with the config script alone: sign-in through
    /// Apple's button and ck serve's popup, zones, saves, a zone-wide query, zone changes, a
    /// notification of a CLI change (none of the page's own), a binary asset through its signed
    /// downloadURL (Tests/Browser/cloudkit_page.py). Needs a copy of cloudkit.js.
    func testCloudKitJSInAPageSignsInSyncsAndIsNotified() throws {
        _ = try Self.browser()
        let copy = ProcessInfo.processInfo.environment["CK_CLOUDKIT_JS"] ?? Self.repo.appendingPathComponent(".scratch/cloudkit.js").path
        guard FileManager.default.fileExists(atPath: copy) else { throw XCTSkip("needs a copy of Apple's cloudkit.js at $CK_CLOUDKIT_JS or .scratch/cloudkit.js") }
        let result = try Self.run("cloudkit_page.py", [Sandbox.binary.path, copy])
        if result.status == 77 { throw XCTSkip("needs Chromium, chromedriver and python3's selenium") }
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.pages.filter { ($0["ok"] as? Bool) != true }.count, 0, result.output)
        XCTAssertGreaterThanOrEqual(result.pages.count, 14, result.output)
    }
}
