import CKJSON
import CKModel

/// The lines of an index run, as bytes whose order is the query order, so that a run is sorted
/// by plain byte comparison and searched by bisection:
/// - a record-name run holds one line per record: the name's UTF-8 bytes in hex;
/// - a field run holds one line per record: the field's key, a space, the name in hex.
/// A field's key is `n` + 16 hex digits for a number (the IEEE-754 bits of the Double the query
/// engine compares, flipped so that byte order is numeric order), `t` + hex of the UTF-8 bytes
/// for text and references (byte order is the code-point order `QueryMatcher.compare` uses),
/// or `z` when the record has no value a sort or range can use (missing, a list, another kind):
/// those sort last, as they do in a query. A `~` line is a tombstone (the record was deleted or
/// changed type since the run below was made); it sorts after everything.
enum IndexKey {
    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    package static let space: UInt8 = 0x20
    package static let missing: UInt8 = 0x7A  // z
    package static let tombstone: UInt8 = 0x7E  // ~

    package static func hex(_ bytes: some Sequence<UInt8>, into out: inout [UInt8]) {
        for b in bytes {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 15)])
        }
    }

    package static func hex(_ s: String) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(s.utf8.count * 2)
        hex(s.utf8, into: &out)
        return out
    }

    static func unhex(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count / 2)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            guard let h = nibble(bytes[i]), let l = nibble(bytes[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    /// The key of a value as the query engine orders it (`QueryEngine.key`), or `z`.
    package static func key(_ value: JSONValue?) -> [UInt8] {
        guard let v = value, let s = QueryMatcher.scalar(v) else { return [missing] }
        switch s {
        case .number(let d): return number(d)
        case .text(let t): return text(t)
        }
    }

    package static func number(_ d: Double) -> [UInt8] {
        // -0 compares equal to 0; NaN never reaches a record.
        let bits = (d == 0 ? 0.0 : d).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        var out: [UInt8] = [0x6E]
        for shift in stride(from: 60, through: 0, by: -4) { out.append(hexDigits[Int((ordered >> UInt64(shift)) & 15)]) }
        return out
    }

    package static func text(_ t: String) -> [UInt8] {
        var out: [UInt8] = [0x74]
        hex(t.utf8, into: &out)
        return out
    }

    /// The key a record has in a field's run: its sort key for that field (nil field: the
    /// record's own value is not a scalar).
    package static func key(of r: Record, field: String) -> [UInt8] {
        guard let f = QueryMatcher.fieldValue(r, field), !f.type.isList else { return [missing] }
        return key(f.value)
    }

    /// A field-run line: key, space, name in hex.
    package static func line(key: [UInt8], name: String) -> [UInt8] {
        var out = key
        out.reserveCapacity(key.count + 1 + name.utf8.count * 2)
        out.append(space)
        hex(name.utf8, into: &out)
        return out
    }

    /// The record name a line carries (after the last space in a field run; the whole line in a
    /// name run; after `~` in a tombstone).
    package static func name(ofLine line: ArraySlice<UInt8>, fieldRun: Bool) -> String? {
        var body = line
        if body.first == tombstone { body = body.dropFirst(); if fieldRun, body.first == space { body = body.dropFirst() } }
        else if fieldRun {
            guard let sp = body.lastIndex(of: space) else { return nil }
            body = body[(sp + 1)...]
        }
        return unhex(body).flatMap { UTF8Text.string($0) }
    }

    /// The name part of a line, still in hex (after the space in a field run; the whole line in
    /// the names run).
    static func hexName(ofLine line: ArraySlice<UInt8>, fieldRun: Bool) -> ArraySlice<UInt8> {
        guard fieldRun, let sp = line.lastIndex(of: space) else { return line }
        return line[(sp + 1)...]
    }

    /// The name a line is about, still in hex: a tombstone's too.
    static func nameKey(ofLine line: ArraySlice<UInt8>, fieldRun: Bool) -> ArraySlice<UInt8> {
        var body = line
        if body.first == tombstone {
            body = body.dropFirst()
            if fieldRun, body.first == space { body = body.dropFirst() }
            return body
        }
        return hexName(ofLine: body, fieldRun: fieldRun)
    }

    /// The key part of a field-run line (before its space).
    static func keyPart(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let sp = line.firstIndex(of: space) else { return line }
        return line[line.startIndex..<sp]
    }

    static func tombstoneLine(name: String, fieldRun: Bool) -> [UInt8] {
        var out: [UInt8] = fieldRun ? [tombstone, space] : [tombstone]
        hex(name.utf8, into: &out)
        return out
    }

    static func isTombstone(_ line: ArraySlice<UInt8>) -> Bool { line.first == tombstone }
}

/// A line's name in hex (`IndexKey.nameKey`) as a dictionary key, hashed in one call over its
/// bytes: `ArraySlice<UInt8>`'s own `Hashable` feeds the hasher one byte at a time, and the
/// upkeep of an index hashes every name of the runs it merges (a few percent of a server's
/// creates).
struct NameBytes: Hashable {
    let bytes: ArraySlice<UInt8>
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    static func == (a: NameBytes, b: NameBytes) -> Bool { a.bytes.count == b.bytes.count && a.bytes.byteOrder(b.bytes) == 0 }
}
