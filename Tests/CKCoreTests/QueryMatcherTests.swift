import CKJSON
import XCTest
@testable import CKStore

/// Query comparisons of text go by Unicode code point, as the markers and indexes order names.
final class QueryMatcherTests: XCTestCase {
    func testTextComparesByCodePoint() {
        func cmp(_ a: String, _ b: String) -> Int? { QueryMatcher.compare(.string(a), .string(b)) }
        XCTAssertEqual(cmp("a", "a"), 0)
        XCTAssertEqual(cmp("ab", "abc"), -1, "a prefix comes first")
        XCTAssertEqual(cmp("b", "abc"), 1)
        XCTAssertEqual(cmp("Z", "a"), -1, "upper case before lower, as code points go")
        XCTAssertEqual(cmp("é", "z"), 1, "U+00E9 after U+007A")
        XCTAssertEqual(cmp("\u{1F600}", "\u{FFFD}"), 1, "a scalar past the BMP after U+FFFD (UTF-16's order would put it first)")
        XCTAssertEqual(cmp("e\u{301}", "é"), -1, "no normalization: e and a combining accent is not U+00E9")
        XCTAssertEqual(QueryMatcher.compare(.int(2), .double(10)), -1)
        XCTAssertNil(QueryMatcher.compare(.string("1"), .int(1)))
    }
}
