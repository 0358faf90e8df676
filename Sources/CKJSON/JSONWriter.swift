/// The one JSON encoder for everything ck writes: keys sorted by bytes, stable number
/// formatting, so identical state gives identical bytes. Encodes into a byte buffer (appending
/// bytes costs a fraction of appending to a String), made a String once at the end.
public enum JSONWriter {
    /// Pretty-printed with two-space indentation and a trailing newline.
    public static func pretty(_ v: JSONValue) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        emit(v, into: &out, indent: 0, pretty: true)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }

    /// One compact line (NDJSON), with a trailing newline.
    public static func line(_ v: JSONValue) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        emit(v, into: &out, indent: 0, pretty: false)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }

    /// Compact, without newline.
    public static func compact(_ v: JSONValue) -> String {
        var out: [UInt8] = []
        emit(v, into: &out, indent: 0, pretty: false)
        return String(decoding: out, as: UTF8.self)
    }

    public static func write(_ v: JSONValue, into out: inout String, indent: Int, pretty: Bool) {
        var bytes: [UInt8] = []
        emit(v, into: &bytes, indent: indent, pretty: pretty)
        out.append(String(decoding: bytes, as: UTF8.self))
    }

    public static func emit(_ v: JSONValue, into out: inout [UInt8], indent: Int, pretty: Bool) {
        switch v {
        case .null: literal("null", into: &out)
        case .bool(let b): literal(b ? "true" : "false", into: &out)
        case .int(let i): emitInt(i, into: &out)
        case .double(let d): out.append(contentsOf: formatDouble(d).utf8)
        case .string(let s): emitString(s, into: &out)
        case .array(let a):
            if a.isEmpty { literal("[]", into: &out); return }
            out.append(0x5B)
            for (n, e) in a.enumerated() {
                if n > 0 { out.append(0x2C) }
                if pretty { newline(indent + 2, into: &out) }
                emit(e, into: &out, indent: indent + 2, pretty: pretty)
            }
            if pretty { newline(indent, into: &out) }
            out.append(0x5D)
        case .object(let o):
            if o.isEmpty { literal("{}", into: &out); return }
            out.append(0x7B)
            var first = true
            for (k, e) in o.sorted(by: { $0.key.byteOrder($1.key) < 0 }) {
                if !first { out.append(0x2C) }
                first = false
                if pretty { newline(indent + 2, into: &out) }
                emitString(k, into: &out)
                out.append(0x3A)
                if pretty { out.append(0x20) }
                emit(e, into: &out, indent: indent + 2, pretty: pretty)
            }
            if pretty { newline(indent, into: &out) }
            out.append(0x7D)
        }
    }

    public static func newline(_ indent: Int, into out: inout [UInt8]) {
        // Copied in one append from a line feed and a row of spaces: appending `repeatElement`
        // went a byte at a time through the generic sequence path, 4 % of a query page.
        guard indent < lineStart.count else {
            out.append(0x0A)
            return out.append(contentsOf: repeatElement(UInt8(0x20), count: indent))
        }
        lineStart.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[...indent])) }
    }

    private static let lineStart: [UInt8] = [0x0A] + [UInt8](repeating: 0x20, count: 64)

    /// Appends text ck spells out itself (`false`, a member's key): ASCII that needs no escaping.
    public static func literal(_ s: StaticString, into out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    public static func emitInt(_ i: Int64, into out: inout [UInt8]) {
        if i == Int64.min { out.append(contentsOf: String(i).utf8); return }
        var v = i < 0 ? -i : i
        if i < 0 { out.append(0x2D) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat { d[n] = UInt8(v % 10) + 0x30; v /= 10; n += 1 } while v > 0
            while n > 0 { n -= 1; out.append(d[n]) }
        }
    }

    static func formatDouble(_ d: Double) -> String {
        if !d.isFinite { return "null" }
        if d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) + ".0" }
        return "\(d)"
    }

    public static func emitString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        // Most strings need no escaping: copy them whole. (U+2028/2029 start with 0xE2.)
        var s = s
        let clean: Bool = s.withUTF8 { buf in
            for b in buf where b < 0x20 || b == 0x22 || b == 0x5C || b == 0xE2 { return false }
            out.append(contentsOf: buf)
            return true
        }
        if !clean { out.append(contentsOf: escaped(s).utf8) }
        out.append(0x22)
    }

    /// A string's escaped form (without quotes).
    private static func escaped(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case "\u{08}": out.append("\\b")
            case "\u{0C}": out.append("\\f")
            default:
                if u.value < 0x20 || u.value == 0x2028 || u.value == 0x2029 {
                    let hex = String(u.value, radix: 16)
                    out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }
}
