import CKCore
@testable import CKCLI
import CKTestSupport
import Foundation
import XCTest

/// `ck serve`'s options refused before anything listens or is made: exit 2 with the option
/// named, the data directory unchanged (what a server does is in EndToEndTests).
final class ServeOptionTests: XCTestCase {
    func testOptionsThatCannotWorkAreRefusedFirst() {
        let s = CLISandbox()
        s.signIn()
        s.assertUnchanged("serve refusals") {
            assertFailure(s.ck("serve", "--seed", "export.ndjson"), exit: 2, contains: "--seed loads records into an --ephemeral server")
            assertFailure(s.ck("serve", "--port", "http"), exit: 2, contains: "--port")
            assertFailure(s.ck("serve", "--ephemeral", "extra"), exit: 2, contains: "unexpected argument")
            assertFailure(s.ck("serve", "--snippet=yes"), exit: 2)
            assertFailure(s.ck("console", "--port", "http"), exit: 2, contains: "--port")
            assertFailure(s.ck("console", "--seed", "export.ndjson"), exit: 2, contains: "--seed loads records into an --ephemeral server")
            assertFailure(s.ck("console", "--snippet"), exit: 2, contains: "--snippet")
            assertFailure(s.ck("console", "extra"), exit: 2, contains: "unexpected argument")
            assertFailure(s.ck("console", "--host", "0.0.0.0"), exit: 2, contains: "loopback address only")
            assertFailure(s.ck("serve", "--no-browser"), exit: 2, contains: "--no-browser")
        }
    }

    /// `$BROWSER` as Python's webbrowser reads it: a `:`-separated list, the first that exists.
    func testTheBrowserIsTheFirstOfBROWSERThatExists() {
        XCTAssertEqual(BrowserOpener.find("sh", path: "/nonexistent:/bin"), "/bin/sh")
        XCTAssertNil(BrowserOpener.find("/nonexistent/browser", path: "/bin"))
        XCTAssertNil(BrowserOpener.open("http://127.0.0.1:1/console/", environment: ["BROWSER": "/nonexistent/browser:/bin/true"]))
        XCTAssertEqual(BrowserOpener.open("http://127.0.0.1:1/console/", environment: ["BROWSER": "/nonexistent/browser"]),
                       "no browser to open ($BROWSER=/nonexistent/browser is not a program)")
        XCTAssertNotNil(BrowserOpener.open("http://127.0.0.1:1/console/", environment: ["PATH": "/nonexistent"]))
    }
}
