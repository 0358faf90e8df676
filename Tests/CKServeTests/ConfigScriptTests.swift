import CKCore
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// `/ck/cloudkit-config.js` and the snippet that loads it: a page's one-line hookup to ck serve.
/// (Tests/Browser runs the script in Chromium; here, what the server answers.)
final class ConfigScriptTests: XCTestCase {
    func testTheScriptIsServedWithoutCredentialsAndNamesThisServer() throws {
        let f = try ServeFixture()
        let got = try f.client().request("GET", CloudKitConfigScript.path)
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.header("Content-Type"), "text/javascript; charset=utf-8")
        XCTAssertTrue(got.text.contains("var server = \"\(f.url)\";"), got.text)
        // Apple's origins are rewritten, the page's own fetch is kept, partitions name us.
        for part in ["apple-cloudkit\\.com", "pageFetch || builtin", "publicDatabasePartition: server", "feedbackws"] {
            XCTAssertTrue(got.text.contains(part), part)
        }
        XCTAssertEqual(try f.client().request("HEAD", CloudKitConfigScript.path).status, 200)
        // It is a script, not an endpoint: anything but GET is refused as for any other URL.
        XCTAssertEqual(try f.client().request("POST", CloudKitConfigScript.path, json: "{}").status, 400)
        XCTAssertEqual(try f.client().request("GET", "/ck/other.js").status, 404)
    }

    func testTheSnippetLoadsCloudKitJSThenTheScriptWithTheContainersToken() {
        let s = CloudKitConfigScript.snippet(serverURL: "http://127.0.0.1:9", container: "iCloud.com.example.app", environment: .production, apiToken: "ab12")
        let lines = s.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "<script src=\"https://cdn.apple-cloudkit.com/ck/2/cloudkit.js\"></script>")
        XCTAssertEqual(lines.dropFirst().first, "<script src=\"http://127.0.0.1:9/ck/cloudkit-config.js\"></script>")
        XCTAssertTrue(s.contains("containerIdentifier: \"iCloud.com.example.app\", environment: \"production\""), s)
        XCTAssertTrue(s.contains("apiTokenAuth: { apiToken: \"ab12\", persist: true }"), s)
    }
}
