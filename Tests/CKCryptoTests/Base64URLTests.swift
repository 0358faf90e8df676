import Foundation
import XCTest
@testable import CKCrypto

/// Tokens and continuation markers spell their parts in unpadded base64url, encoded and decoded
/// on the bytes: the same text as Foundation's base64 with `-_` and no padding, and back.
final class Base64URLTests: XCTestCase {
    func testEncodingMatchesFoundationAndDecodesBack() {
        var rng = SystemRandomNumberGenerator()
        for n in 0..<300 {
            let bytes = (0..<(n < 64 ? n : Int.random(in: 0...400, using: &rng))).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let text = Base64URL.encode(bytes)
            XCTAssertEqual(text, foundation)
            XCTAssertEqual(Base64URL.decode(text), bytes)
        }
    }

    func testDecodingRefusesWhatIsNotUnpaddedBase64url() {
        for bad in ["a", "abcde", "ab+c", "ab/c", "ab=", "ab c", "é", "AB\u{0}"] {
            XCTAssertNil(Base64URL.decode(bad), bad)
        }
        XCTAssertEqual(Base64URL.decode(""), [])
        XCTAssertEqual(Base64URL.decode("_-8"), [0xFF, 0xEF])
    }
}
