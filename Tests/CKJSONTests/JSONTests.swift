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

    /// A decoder's keys read as their bytes: compared with the names it knows, given as text
    /// when unknown, and a key written with an escape is a shape the reader declines.
    func testMemberKeysAreReadAsBytes() throws {
        var p = JSONParser(document: Array(#"{"type": "STRING", "value": [1, {"type": 2}], "café": true}"#.utf8))
        var seen: [String] = []
        try p.forEachMemberKey { key, p in
            if p.key(key, is: "type") { seen.append("type=" + (try p.nextString())) }
            else if p.key(key, is: "value") { seen.append("value"); _ = try p.nextValue() }
            else { XCTAssertFalse(p.key(key, is: "caf")); seen.append(try p.text(of: key)); _ = try p.nextValue() }
        }
        XCTAssertEqual(seen, ["type=STRING", "value", "café"])
        XCTAssertTrue(p.isAtEnd())
        for declined in [#"{"typ\u0065": 1}"#, #"{"a\"b": 1}"#, #"["type"]"#, #"{"type" 1}"#, #"{"type": 1"#, #"{"type": 1,}"#] {
            var q = JSONParser(document: Array(declined.utf8))
            XCTAssertThrowsError(try q.forEachMemberKey { _, p in _ = try p.nextValue() }, declined) { XCTAssertTrue($0 is JSONParser.Mismatch, declined) }
        }
        var empty = JSONParser(document: Array("{ }".utf8))
        try empty.forEachMemberKey { _, _ in XCTFail("an empty object has no members") }
        // A key handed to a shorter document is none of its keys, and no text of it.
        var long = JSONParser(document: Array(#"{"abcdefghijklmnopqrstuvwxyz": 1}"#.utf8))
        let short = JSONParser(document: Array("{}".utf8))
        try long.forEachMemberKey { key, p in
            _ = try p.nextValue()
            XCTAssertTrue(p.key(key, is: "abcdefghijklmnopqrstuvwxyz"))
            XCTAssertFalse(short.key(key, is: "abcdefghijklmnopqrstuvwxyz"))
            XCTAssertThrowsError(try short.text(of: key))
        }
    }

    /// Keys ck spells out are written as a key from data is, and indentation past the row of
    /// spaces kept for it is written all the same.
    func testLiteralKeysAndDeepIndentation() {
        for pretty in [true, false] {
            var literal: [UInt8] = [], text: [UInt8] = []
            var a = JSONObjectEmitter(indent: 6, pretty: pretty), b = JSONObjectEmitter(indent: 6, pretty: pretty)
            a.key(literal: "created", into: &literal); b.key("created", into: &text)
            a.string(literal: "recordName", "n\"1", into: &literal); b.string("recordName", "n\"1", into: &text)
            a.close(into: &literal); b.close(into: &text)
            XCTAssertEqual(literal, text)
        }
        var deep: JSONValue = ["leaf": true]
        for _ in 0..<40 { deep = ["k": deep] }
        let lines = JSONWriter.pretty(deep).split(separator: "\n")
        XCTAssertEqual(lines.count, 83)
        for (n, line) in lines.enumerated() {
            let depth = n <= 41 ? n : 82 - n
            XCTAssertEqual(line.prefix { $0 == " " }.count, 2 * depth, "line \(n)")
        }
        XCTAssertEqual(lines[41].drop { $0 == " " }, #""leaf": true"#)
    }
}
