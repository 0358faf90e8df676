import CKTestSupport
import Foundation
import XCTest

/// The account flows that need a process of their own: `account events --follow` beside
/// another process's change. (The rest of the flows run in-process: CKCLITests/AccountFlowTests.)
final class AccountFlowTests: XCTestCase {
    /// End to end: `--follow` installs signal handlers and polls until its timeout, which
    /// belongs in a process of its own, not in the test runner.
    func testEventsFollowPrintsNewEventsAndStopsAtTimeout() throws {
        let s = Sandbox()
        s.signIn()
        let p = Process()
        p.executableURL = Sandbox.binary
        p.arguments = ["account", "events", "--follow", "--timeout", "3"]
        p.environment = s.environment
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        Thread.sleep(forTimeInterval: 0.5)
        s.ck("account", "set-status", "temporarilyUnavailable")
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[1].contains("temporarilyUnavailable"))
    }
}
