import XCTest
@testable import CKServe

/// Header names compare case-insensitively (RFC 9110 §5.1) byte by byte; query strings split
/// by bytes and percent-decode as CloudKit JS encodes them.
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

    func testQueryStringsSplitAndDecode() {
        let q = QueryString("ckAPIToken=abc&ckWebAuthToken=a%2Bb%3D&empty=&flag&=v&&x=1=2&bad=%zz&plus=a+b&café=é")
        XCTAssertEqual(q["ckAPIToken"], "abc")
        XCTAssertEqual(q["ckWebAuthToken"], "a+b=")
        XCTAssertEqual(q["empty"], "")
        XCTAssertEqual(q["flag"], "")
        XCTAssertEqual(q[""], "v")
        XCTAssertEqual(q["x"], "1=2")
        XCTAssertNil(q["bad"], "a malformed escape drops the pair")
        XCTAssertEqual(q["plus"], "a+b", "+ is a plus")
        XCTAssertEqual(q["café"], "é")
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a/b?x=1?y", headers: HTTPHeaders()).path, "/a/b")
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a/b?x=1?y", headers: HTTPHeaders()).query, "x=1?y")
        XCTAssertNil(HTTPRequestHead(method: "GET", target: "/a/b", headers: HTTPHeaders()).query)
        XCTAssertEqual(HTTPRequestHead(method: "GET", target: "/a/b?", headers: HTTPHeaders()).query, "")
    }
}
