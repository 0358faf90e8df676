import XCTest
@testable import CKHTTP

final class HTTPMessageTests: XCTestCase {
    func testHeaderNamesCompareWithoutCase() {
        var h = HTTPHeaders([("Content-Type", "text/plain"), ("X-Apple-CloudKit-Request-KeyID", "k1"), ("content-type", "second")])
        XCTAssertEqual(h["content-type"], "text/plain")
        XCTAssertEqual(h.values("CONTENT-TYPE"), ["text/plain", "second"])
        XCTAssertEqual(h["x-apple-cloudkit-request-keyid"], "k1")
        h.set("Content-Type", "application/json")
        XCTAssertEqual(h.values("content-type"), ["application/json"])
        h.remove("x-apple-cloudkit-request-keyid")
        XCTAssertNil(h["X-Apple-CloudKit-Request-KeyID"])
    }

    /// The target is kept byte for byte (a signature covers it); path and query split at the
    /// first `?` and are not decoded.
    func testTheTargetSplitsAtTheFirstQuestionMarkUndecoded() {
        let head = HTTPRequestHead(method: "POST", target: "/database/1/iCloud.x/development/public/records/query?ckAPIToken=a%2Bb&x=?y", headers: HTTPHeaders())
        XCTAssertEqual(head.path, "/database/1/iCloud.x/development/public/records/query")
        XCTAssertEqual(head.query, "ckAPIToken=a%2Bb&x=?y")
        XCTAssertNil(HTTPRequestHead(method: "GET", target: "/a/b", headers: HTTPHeaders()).query)
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a?", headers: HTTPHeaders()).query, "")
        // Split by bytes: characters of several bytes on either side stay whole.
        let wide = HTTPRequestHead(method: "GET", target: "/zoné/日本?q=ü&é", headers: HTTPHeaders())
        XCTAssertEqual(wide.path, "/zoné/日本")
        XCTAssertEqual(wide.query, "q=ü&é")
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "?", headers: HTTPHeaders()).path, "")
    }
}
