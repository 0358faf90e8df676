import XCTest
@testable import CKJSON

/// `ByteOrder` must order byte strings exactly as the standard library's byte-at-a-time
/// comparisons do, on every length, prefix and byte value (memcmp compares bytes unsigned).
final class ByteOrderTests: XCTestCase {
    private var rng = SystemRandomNumberGenerator()

    private func randomBytes() -> [UInt8] {
        // Few distinct bytes, so that prefixes and equal runs are common; 0x00, 0x7F, 0x80 and
        // 0xFF sit at the edges of signed and unsigned order.
        let alphabet: [UInt8] = [0x00, 0x20, 0x61, 0x62, 0x7F, 0x80, 0xC3, 0xFF]
        return (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
    }

    func testBytesOrderAsTheStandardLibraryOrdersThem() {
        for _ in 0..<5000 {
            let a = randomBytes(), b = randomBytes()
            let expected = a.lexicographicallyPrecedes(b)
            XCTAssertEqual(a.precedes(b), expected, "\(a) \(b)")
            XCTAssertEqual(a[...].precedes(b), expected, "\(a) \(b)")
            XCTAssertEqual(a.precedes(b[...]), expected, "\(a) \(b)")
            // A slice that does not start at 0 compares its own bytes only.
            let padded = [0x61] + b
            XCTAssertEqual(a[...].precedes(padded.dropFirst()), expected, "\(a) \(b)")
            let order = a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in ByteOrder.of(x, y) } }
            XCTAssertEqual(order, a == b ? 0 : (expected ? -1 : 1), "\(a) \(b)")
        }
    }

    func testStringsOrderAndMatchByTheirUTF8Bytes() {
        let pieces = ["", "a", "b", "é", "e\u{301}", "😀", "Z", "日", "\u{0}", "ab"]
        for _ in 0..<3000 {
            let a = (0..<Int.random(in: 0...3, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            let b = (0..<Int.random(in: 0...3, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            let same = a.utf8.elementsEqual(b.utf8)
            XCTAssertEqual(a.sameBytes(b), same, "\(a) \(b)")
            XCTAssertEqual(a.byteOrder(b), same ? 0 : (a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1), "\(a) \(b)")
        }
        // Canonically equivalent text is equal as a String, never as a name.
        XCTAssertEqual("é", "e\u{301}")
        XCTAssertFalse("é".sameBytes("e\u{301}"))
        // A long string (not stored inline) against a short one with the same start.
        XCTAssertEqual(String(repeating: "x", count: 40).byteOrder("xx"), 1)
        XCTAssertTrue(String(repeating: "x", count: 40).sameBytes(String(repeating: "x", count: 40)))
    }
}

/// Text from bytes: ASCII taken as it is, anything else validated, never repaired.
final class UTF8TextTests: XCTestCase {
    func testASCIIIsTakenAndTheRestValidated() {
        XCTAssertEqual(UTF8Text.string(Array("todo-1046".utf8)), "todo-1046")
        XCTAssertEqual(UTF8Text.string([]), "")
        XCTAssertEqual(UTF8Text.string(Array("café 😀".utf8)), "café 😀")
        XCTAssertEqual(UTF8Text.string([0x00, 0x7F]), "\u{0}\u{7F}")
        for bad: [UInt8] in [[0xFF], [0x61, 0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x80]] {
            XCTAssertNil(UTF8Text.string(bad), "\(bad)")
        }
    }
}
