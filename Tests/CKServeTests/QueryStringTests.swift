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
    }
}
