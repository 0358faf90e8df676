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

    /// An object's members in order: `body` gets each key and reads its value.
    public mutating func forEachMember(_ body: (String, inout JSONParser) throws -> Void) throws {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { throw Mismatch() }
        try enter()
        i += 1
        skipWhitespace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Mismatch() }
            let key = try parseString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw Mismatch() }
            i += 1
            skipWhitespace()
            try body(key, &self)
            skipWhitespace()
            guard i < bytes.count else { throw Mismatch() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; break }
            throw Mismatch()
        }
        depth -= 1
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
