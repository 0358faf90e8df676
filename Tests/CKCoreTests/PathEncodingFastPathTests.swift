import CKCrypto
import CKModel
import XCTest
@testable import CKCore

/// A name with nothing to encode is its own path component (the common case, taken without
/// encoding); every other name is encoded exactly as before.
final class PathEncodingFastPathTests: XCTestCase {
    func testNamesWithNothingToEncodeAreKeptAndTheRestEncoded() {
        for name in ["Bench", "lookup-me", "a.b", "_0de8a1e41120a28cac19ba09e5bd7c02", "iCloud.com.example.app", String(repeating: "x", count: 200)] {
            XCTAssertEqual(PathEncoding.component(name), name, name)
        }
        XCTAssertEqual(PathEncoding.component(""), "%")
        XCTAssertEqual(PathEncoding.component(".hidden"), "%2Ehidden")
        XCTAssertEqual(PathEncoding.component("a b"), "a%20b")
        XCTAssertEqual(PathEncoding.component("a/b"), "a%2Fb")
        let long = String(repeating: "x", count: 201)
        XCTAssertEqual(PathEncoding.component(long), String(repeating: "x", count: 120) + "~" + SHA256.hex(Array(long.utf8)), "too long: cut and hashed")
        XCTAssertEqual(PathEncoding.component(long, limit: 255), long, "within a larger limit: kept")
    }
}
