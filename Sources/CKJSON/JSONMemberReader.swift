#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading a document a member at a time, for a decoder that builds its value as it reads (a
/// record file straight into a `Record`, with no dictionary made per object). A shape other
/// than the one asked for throws `Mismatch`, and the caller takes the general path
/// (`JSONParser.parse`), which says exactly what is wrong, if anything.
extension JSONParser {
    /// The document is not of the shape the reader asked for.
    public struct Mismatch: Error {
        public init() {}
    }

    /// A reader at the start of a document (after a UTF-8 byte order mark, if any).
    public init(document bytes: [UInt8]) {
        self.init(bytes: bytes)
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
    }

    /// Whether only whitespace is left.
    public mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return i == bytes.count
    }

    /// An object's members in order: `body` gets each key, as text, and reads its value (a key
    /// written with an escape is a `Mismatch`, as for `forEachMemberKey`).
    public mutating func forEachMember(_ body: (String, inout JSONParser) throws -> Void) throws {
        try forEachMemberKey { key, p in try body(try p.text(of: key), &p) }
    }

    /// A member's key where it stands in the document, for comparing with the keys a decoder
    /// knows without making a String of it (most of what reading a key cost).
    public struct MemberKey {
        let start: Int
        let end: Int
    }

    /// An object's members in order, as `forEachMember`, each key given as its bytes: a key
    /// written with an escape is a `Mismatch` (ck writes none in the keys it names).
    public mutating func forEachMemberKey(_ body: (MemberKey, inout JSONParser) throws -> Void) throws {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { throw Mismatch() }
        try enter()
        i += 1
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Mismatch() }
            let start = i + 1
            let end = bytes.withUnsafeBufferPointer { b -> Int in
                var j = start
                while j < b.count, b[j] != 0x22, b[j] != 0x5C, b[j] >= 0x20 { j += 1 }
                return j
            }
            guard end < bytes.count, bytes[end] == 0x22 else { throw Mismatch() }
            i = end + 1
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw Mismatch() }
            i += 1
            skipWhitespace()
            try body(MemberKey(start: start, end: end), &self)
            skipWhitespace()
            guard i < bytes.count else { throw Mismatch() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; break }
            throw Mismatch()
        }
        depth -= 1
    }

    /// Whether a key is `name` (ASCII, as a decoder spells it). A key from another document
    /// (past this one's end) is no key of this one.
    public func key(_ k: MemberKey, is name: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount
        guard k.end - k.start == n, k.end <= bytes.count else { return false }
        return bytes.withUnsafeBufferPointer { b in memcmp(b.baseAddress! + k.start, name.utf8Start, n) == 0 }
    }

    /// A key as text (one a decoder does not know, to name or keep it).
    public func text(of k: MemberKey) throws -> String {
        guard k.end <= bytes.count, let s = bytes.withUnsafeBufferPointer({ b in UTF8Text.string(UnsafeBufferPointer(rebasing: b[k.start..<k.end])) })
        else { throw Mismatch() }
        return s
    }

    /// The next value, which must be a string.
    public mutating func nextString() throws -> String {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Mismatch() }
        return try parseString()
    }

    /// The next value, whatever it is.
    public mutating func nextValue() throws -> JSONValue {
        skipWhitespace()
        return try parseValue()
    }
}
