import XCTest
@testable import CKCrypto

/// SHA-256 against the examples of FIPS 180-4 (and NIST's long message), one-shot and fed in
/// every split, since asset checksums and token keys rest on it.
final class SHA256Tests: XCTestCase {
    let vectors: [(String, String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ]

    func testKnownDigests() {
        for (text, hex) in vectors {
            XCTAssertEqual(SHA256.hex(Array(text.utf8)), hex, text)
            XCTAssertEqual(SHA256.hex(text.utf8), hex, "a non-contiguous collection: \(text)")
        }
        XCTAssertEqual(SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testEverySplitOfTheStreamAgrees() {
        let bytes = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let whole = SHA256.digest(bytes)
        for cut in 0...bytes.count {
            var s = SHA256Stream()
            s.update(Array(bytes[..<cut]))
            s.update(Array(bytes[cut...]))
            XCTAssertEqual(s.finish(), whole, "split at \(cut)")
        }
    }

    func testSHA256KnownVectors() {
        XCTAssertEqual(SHA256.hex(Array("".utf8)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hex(Array(String(repeating: "a", count: 1000).utf8)),
                       "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}
