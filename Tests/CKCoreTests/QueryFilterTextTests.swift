import Foundation
import XCTest
@testable import CKCore

/// `--filter` is split without Foundation's string bridging: its trimming must be what
/// `trimmingCharacters(in: .whitespaces)` did (tab and Unicode space separators, not newlines).
final class QueryFilterTextTests: XCTestCase {
    func testTrimmingMatchesFoundationWhitespace() {
        let pieces = [" ", "\t", "\u{00A0}", "\u{3000}", "\u{2009}", "\n", "\r", "\u{2028}", "a", "é", "e\u{0301}", "日", "\"", "1", ">"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let s = (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            XCTAssertEqual(String(QueryFilterText.trimmingWhitespace(s[...])), s.trimmingCharacters(in: .whitespaces), "\(Array(s.unicodeScalars))")
        }
    }

    func testFilterAroundUnicodeSpacesReadsAsWithout() throws {
        let plain = try QueryFilterText.scan("priority >= 3")
        let spaced = try QueryFilterText.scan("\u{3000}\tpriority >=\u{00A0}3\u{2009} ")
        XCTAssertEqual(spaced.field, plain.field)
        XCTAssertEqual(spaced.comparator, plain.comparator)
        XCTAssertEqual(spaced.value, plain.value)
        XCTAssertThrowsError(try QueryFilterText.scan("priority >= \u{3000}"), "a value of spaces is no value")
    }
}
