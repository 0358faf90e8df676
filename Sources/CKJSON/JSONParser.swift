import Foundation

/// A strict JSON parser (RFC 8259): rejects trailing garbage, invalid UTF-8, lone surrogates,
/// non-finite numbers and nesting deeper than `maxDepth`. Errors name line and column.
public struct JSONParser {
    public static let maxDepth = 256

    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public let line: Int
        public let column: Int
        public var description: String { "\(message) at line \(line), column \(column)" }
    }

    let bytes: [UInt8]
    var i = 0
    var depth = 0

    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        var p = JSONParser(bytes: bytes)
        return try p.parseDocument()
    }

    public static func parse(_ text: String) throws -> JSONValue {
        try parse(Array(text.utf8))
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func parseDocument() throws -> JSONValue {
        // Skip a UTF-8 byte order mark.
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
        skipWhitespace()
        if i >= bytes.count { throw fail("empty input, expected a JSON value") }
        let v = try parseValue()
        skipWhitespace()
        if i < bytes.count { throw fail("unexpected '\(printable(bytes[i]))' after the JSON value") }
        return v
    }

    private func position(_ at: Int) -> (Int, Int) {
        var line = 1, col = 1
        var k = 0
        while k < at && k < bytes.count {
            if bytes[k] == 0x0A { line += 1; col = 1 } else if bytes[k] & 0xC0 != 0x80 { col += 1 }
            k += 1
        }
        return (line, col)
    }

    private func fail(_ message: String, at: Int? = nil) -> Failure {
        let (l, c) = position(at ?? i)
        return Failure(message: message, line: l, column: c)
    }

    private func printable(_ b: UInt8) -> String {
        if b >= 0x20 && b < 0x7F { return String(UnicodeScalar(b)) }
        return String(format: "\\x%02X", b)
    }

    mutating func skipWhitespace() {
        // On the buffer with a local index: through `self` each byte cost 15 instructions, and
        // a pretty-printed record file is a third indentation.
        i = bytes.withUnsafeBufferPointer { b in
            var j = i
            while j < b.count {
                switch b[j] {
                case 0x20, 0x09, 0x0A, 0x0D: j += 1
                default: return j
                }
            }
            return j
        }
    }

    mutating func parseValue() throws -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected '\(printable(bytes[i]))', expected a JSON value")
        }
    }

    private mutating func expectWord(_ w: StaticString) throws {
        // Compared in place (two arrays were made for every true, false and null).
        let n = w.utf8CodeUnitCount
        guard i + n <= bytes.count, (0..<n).allSatisfy({ bytes[i + $0] == w.utf8Start[$0] }) else {
            throw fail("invalid literal, expected '\(w)'")
        }
        i += n
    }

    mutating func enter() throws {
        depth += 1
        if depth > JSONParser.maxDepth { throw fail("JSON nested deeper than \(JSONParser.maxDepth) levels") }
    }

    private mutating func parseObject() throws -> JSONValue {
        try enter()
        i += 1
        // Members are gathered first so the dictionary is made once at its size (growing it
        // member by member rehashed it several times per object).
        var members: [(key: String, value: JSONValue, at: Int)] = []
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return .object([:]) }
        // Room for a record's objects at once (grown from one, the array was made four times).
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key in object") }
            let keyAt = i
            let k = try parseString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':' after object key") }
            i += 1
            skipWhitespace()
            members.append((k, try parseValue(), keyAt))
            skipWhitespace()
            guard i < bytes.count else { throw fail("unterminated object") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; break }
            throw fail("expected ',' or '}' in object")
        }
        depth -= 1
        var o = [String: JSONValue](minimumCapacity: members.count)
        for m in members where o.updateValue(m.value, forKey: m.key) != nil {
            throw fail("duplicate key '\(m.key)' in object", at: m.at)
        }
        return .object(o)
    }

    private mutating func parseArray() throws -> JSONValue {
        try enter()
        i += 1
        var a: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return .array(a) }
        while true {
            skipWhitespace()
            a.append(try parseValue())
            skipWhitespace()
            guard i < bytes.count else { throw fail("unterminated array") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; break }
            throw fail("expected ',' or ']' in array")
        }
        depth -= 1
        return .array(a)
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    mutating func parseString() throws -> String {
        let start = i
        // Most strings have no escapes: made straight from the bytes (ASCII needs no check).
        let (j, ascii) = bytes.withUnsafeBufferPointer { b -> (Int, Bool) in
            var j = i + 1
            var high: UInt8 = 0
            while j < b.count {
                let c = b[j]
                if c == 0x22 || c == 0x5C || c < 0x20 { break }
                high |= c
                j += 1
            }
            return (j, high < 0x80)
        }
        if j < bytes.count, bytes[j] == 0x22 {
            let s: String? = bytes.withUnsafeBufferPointer { buf in
                let run = UnsafeBufferPointer(rebasing: buf[(start + 1)..<j])
                return ascii ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
            }
            guard let s else { throw fail("invalid UTF-8 in string", at: start) }
            i = j + 1
            return s
        }
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw fail("unterminated string", at: start) }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw fail("control character in string must be escaped") }
            if b == UInt8(ascii: "\\") {
                i += 1
                guard i < bytes.count else { throw fail("unterminated escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate in \\u escape")
                        }
                        i += 2
                        let low = try parseHex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail("unpaired surrogate in \\u escape")
                    }
                    out.append(contentsOf: Array(String(Character(UnicodeScalar(scalar)!)).utf8))
                default: throw fail("invalid escape '\\\(printable(e))'")
                }
                continue
            }
            out.append(b)
            i += 1
        }
        guard let s = UTF8Text.string(out) else {
            throw fail("invalid UTF-8 in string", at: start)
        }
        return s
    }

    private mutating func parseNumber() throws -> JSONValue {
        let start = i
        var isInt = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count && isDigit(bytes[i]) { throw fail("leading zero in number", at: start) }
        } else {
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            isInt = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: digit expected after '.'") }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            isInt = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: digit expected in exponent") }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if isInt, i - start <= 18 {
            // Up to 18 digits always fit an Int64.
            var v: Int64 = 0
            var k = bytes[start] == UInt8(ascii: "-") ? start + 1 : start
            while k < i { v = v * 10 + Int64(bytes[k] - 0x30); k += 1 }
            return .int(bytes[start] == UInt8(ascii: "-") ? -v : v)
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInt, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw fail("number out of range", at: start) }
        return .double(d)
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
}
