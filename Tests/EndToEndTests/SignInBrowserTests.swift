import CKTestSupport
import Foundation
import XCTest

/// ck serve's sign-in popup in a real browser: Tests/Browser/signin_opener.py drives headless
/// Chromium through Selenium — the allowed page that got the 421 opens its redirectURL and
/// receives the session; a page of another site opening the sign-in URL, naming the app's
/// origin, its own, or none, receives nothing. Skipped without /usr/bin/chromium,
/// /usr/bin/chromedriver and python3's selenium (Debian: chromium, chromium-driver,
/// python3-selenium).
final class SignInBrowserTests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testOnlyTheAllowedOpenerReceivesTheSession() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("needs /usr/bin/python3") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Self.repo.appendingPathComponent("Tests/Browser/signin_opener.py").path, Sandbox.binary.path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if p.terminationStatus == 77 { throw XCTSkip("needs Chromium, chromedriver and python3's selenium") }
        XCTAssertEqual(p.terminationStatus, 0, text)
    }
}
