/// Something the one JSON encoder can write: a JSONValue, or a value that writes its own bytes
/// (a record response) exactly as JSONWriter would write its JSONValue — sorted keys, the same
/// spacing — without building the tree first.
public protocol JSONEncodable {
    /// Appends the value's JSON, as `JSONWriter` lays it out at `indent`.
    func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool)
    /// The value as a tree, for what needs one (tables, CSV).
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONEncodable {
    public func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        JSONWriter.emit(self, into: &out, indent: indent, pretty: pretty)
    }

    public var jsonValue: JSONValue { self }
}

extension JSONWriter {
    /// One compact line (NDJSON) of any encodable value, with a trailing newline.
    public static func line(_ v: some JSONEncodable) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        v.encodeJSON(into: &out, indent: 0, pretty: false)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Writes an object member by member, keys given in sorted order by the caller, laid out as
/// `JSONWriter.emit` lays out an object.
public struct JSONObjectEmitter {
    public let indent: Int
    public let pretty: Bool
    private var empty = true

    public init(indent: Int, pretty: Bool) {
        self.indent = indent
        self.pretty = pretty
    }

    /// Opens the member `key` (an ASCII key that needs no escaping is copied as it is); its value follows.
    public mutating func key(_ key: String, into out: inout [UInt8]) {
        out.append(empty ? 0x7B : 0x2C)
        empty = false
        if pretty { JSONWriter.newline(indent + 2, into: &out) }
        JSONWriter.emitString(key, into: &out)
        out.append(0x3A)
        if pretty { out.append(0x20) }
    }

    /// Opens the member `key`, a key ck spells out itself: ASCII that needs no escaping, copied
    /// without the scan a key from data gets.
    public mutating func key(literal key: StaticString, into out: inout [UInt8]) {
        out.append(empty ? 0x7B : 0x2C)
        empty = false
        if pretty { JSONWriter.newline(indent + 2, into: &out) }
        out.append(0x22)
        JSONWriter.literal(key, into: &out)
        out.append(0x22)
        out.append(0x3A)
        if pretty { out.append(0x20) }
    }

    /// A member whose value is a string.
    public mutating func string(_ key: String, _ value: String, into out: inout [UInt8]) {
        self.key(key, into: &out)
        JSONWriter.emitString(value, into: &out)
    }

    /// A member with a key ck spells out (see `key(literal:)`) whose value is a string.
    public mutating func string(literal key: StaticString, _ value: String, into out: inout [UInt8]) {
        self.key(literal: key, into: &out)
        JSONWriter.emitString(value, into: &out)
    }

    /// The indentation a member's value is written at.
    public var valueIndent: Int { indent + 2 }

    public func close(into out: inout [UInt8]) {
        if empty { JSONWriter.literal("{}", into: &out); return }
        if pretty { JSONWriter.newline(indent, into: &out) }
        out.append(0x7D)
    }
}
