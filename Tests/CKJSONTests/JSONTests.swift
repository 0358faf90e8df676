import XCTest
@testable import CKJSON

final class JSONTests: XCTestCase {
    func testRoundTripKeepsIntegersAndSortsKeys() throws {
        let v = try JSONParser.parse(#"{"b": 1, "a": [1.5, "x", true, null], "c": {"z": -9007199254740993}}"#)
        XCTAssertEqual(JSONWriter.compact(v), #"{"a":[1.5,"x",true,null],"b":1,"c":{"z":-9007199254740993}}"#)
    }

    func testRejectsMalformedInputWithPosition() {
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "{\"a\":1,\"a\":2}", "[1] x", "\"\u{1}\"", "NaN"] {
            XCTAssertThrowsError(try JSONParser.parse(bad), bad)
        }
        XCTAssertThrowsError(try JSONParser.parse("{\n  \"a\": tru\n}")) { e in
            let f = e as! JSONParser.Failure
            XCTAssertEqual(f.line, 2)
        }
    }

    func testRejectsInvalidUTF8AndDeepNesting() {
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0xFF, 0x22]))
        XCTAssertThrowsError(try JSONParser.parse(String(repeating: "[", count: 300) + String(repeating: "]", count: 300)))
        XCTAssertNoThrow(try JSONParser.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)))
    }

    /// Literals are matched in place, whitespace of every kind is skipped, and a string's run
    /// of plain bytes is ASCII or validated UTF-8, up to its quote, escape or control byte.
    func testLiteralsWhitespaceAndStringRuns() throws {
        XCTAssertEqual(try JSONParser.parse(" \t\r\n[true,false,null]\n\r\t "), .array([.bool(true), .bool(false), .null]))
        for bad in ["tru", "[nul]", "fals", "t", "True", "nulL", "[tr", "truex"] {
            XCTAssertThrowsError(try JSONParser.parse(bad), bad)
        }
        XCTAssertThrowsError(try JSONParser.parse("[fals]")) { XCTAssertTrue("\($0)".contains("expected 'false'"), "\($0)") }
        XCTAssertEqual(try JSONParser.parse(#"["caf\u00e9 é", "ascii", "😀x"]"#), .array(["caf\u{e9} \u{e9}", "ascii", "\u{1F600}x"]))
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0x61, 0xC3, 0x22]), "a UTF-8 sequence cut by the quote")
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0x61, 0x0A, 0x22]), "a raw line feed in a string")
    }

    func testSurrogatePairsAndEscapes() throws {
        XCTAssertEqual(try JSONParser.parse(#""\ud83d\ude00\n""#), .string("😀\n"))
        XCTAssertThrowsError(try JSONParser.parse(#""\ud83d""#))
        XCTAssertEqual(JSONWriter.compact(.string("a\"b\\\u{1}")), #""a\"b\\\u0001""#)
    }

    func testPrettyIsStable() {
        let v: JSONValue = ["b": [1, 2], "a": [:], "c": []]
        XCTAssertEqual(JSONWriter.pretty(v), "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": []\n}\n")
    }
}
