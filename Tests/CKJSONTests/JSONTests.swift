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
