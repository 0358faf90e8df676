import Foundation
import XCTest
@testable import CKCrypto

/// Digests, tokens and shard names are written in lower-case hexadecimal, two digits a byte, from
/// any collection of bytes.
final class HexTests: XCTestCase {
    func testEveryByteIsTwoLowerCaseDigits() {
        for b in 0...255 {
            XCTAssertEqual(Hex.string([UInt8(b)]), String(format: "%02x", b))
        }
    }

    func testAnyCollectionOfBytesIsWrittenInOrder() {
        let bytes: [UInt8] = [0x00, 0x0f, 0xa0, 0xff, 0x7b]
        XCTAssertEqual(Hex.string(bytes), "000fa0ff7b")
        XCTAssertEqual(Hex.string(bytes[1...3]), "0fa0ff")
        XCTAssertEqual(Hex.string(Data(bytes)), "000fa0ff7b")
        XCTAssertEqual(Hex.string([UInt8]()), "")
    }
}
