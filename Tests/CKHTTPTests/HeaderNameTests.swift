import XCTest
@testable import CKHTTP

/// Header names compare case-insensitively (RFC 9110 §5.1) byte by byte; a request target
/// splits into path and query.
final class HeaderNameTests: XCTestCase {
    func testHeaderNamesCompareCaseInsensitively() {
        var h = HTTPHeaders([("Content-Type", "text/plain"), ("X-Apple-CloudKit-Request-KeyID", "k"), ("x-apple-cloudkit-request-keyid", "k2")])
        XCTAssertEqual(h["content-type"], "text/plain")
        XCTAssertEqual(h["CONTENT-TYPE"], "text/plain")
        XCTAssertEqual(h.values("X-APPLE-CLOUDKIT-REQUEST-KEYID"), ["k", "k2"])
        XCTAssertNil(h["Content-Typ"])
        XCTAssertNil(h["Content-Typf"])
        XCTAssertFalse(HTTPHeaders.sameName("Ä", "ä"), "only ASCII letters fold")
        h.set("CONTENT-type", "application/json")
        XCTAssertEqual(h.values("Content-Type"), ["application/json"])
        h.remove("x-apple-CLOUDKIT-request-keyid")
        XCTAssertNil(h["X-Apple-CloudKit-Request-KeyID"])
    }

    func testARequestTargetSplitsIntoPathAndQueryAtTheFirstQuestionMark() {
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a/b?x=1?y", headers: HTTPHeaders()).path, "/a/b")
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a/b?x=1?y", headers: HTTPHeaders()).query, "x=1?y")
        XCTAssertNil(HTTPRequestHead(method: "GET", target: "/a/b", headers: HTTPHeaders()).query)
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a/b?", headers: HTTPHeaders()).query, "")
    }
}
