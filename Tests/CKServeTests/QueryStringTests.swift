import XCTest
@testable import CKServe

/// Query strings split by bytes and percent-decode as CloudKit JS encodes them.
final class QueryStringTests: XCTestCase {
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
        // Escapes that decode to bytes that are not UTF-8 drop the pair; a trailing '&' or
        // '=' and an escape cut short are handled at the very end of the string.
        let edges = QueryString("half=%C3&a=%C3%A9&end=&cut=%4")
        XCTAssertNil(edges["half"])
        XCTAssertEqual(edges["a"], "é")
        XCTAssertEqual(edges["end"], "")
        XCTAssertNil(edges["cut"])
        XCTAssertEqual(QueryString("t=1&")["t"], "1")
        XCTAssertEqual(QueryString("")["t"], nil)
    }
}
