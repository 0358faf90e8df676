/// The one JSON encoder for everything ck writes: keys sorted by bytes, stable number
/// formatting, so identical state gives identical bytes.
public enum JSONWriter {
    /// Pretty-printed with two-space indentation and a trailing newline.
    public static func pretty(_ v: JSONValue) -> String {
        var out = ""
        write(v, into: &out, indent: 0, pretty: true)
        out.append("\n")
        return out
    }

    /// One compact line (NDJSON), with a trailing newline.
    public static func line(_ v: JSONValue) -> String {
        var out = ""
        write(v, into: &out, indent: 0, pretty: false)
        out.append("\n")
        return out
    }

    /// Compact, without newline.
    public static func compact(_ v: JSONValue) -> String {
        var out = ""
        write(v, into: &out, indent: 0, pretty: false)
        return out
    }

    static func sortedKeys(_ o: [String: JSONValue]) -> [String] {
        o.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    public static func write(_ v: JSONValue, into out: inout String, indent: Int, pretty: Bool) {
        switch v {
        case .null: out.append("null")
        case .bool(let b): out.append(b ? "true" : "false")
        case .int(let i): out.append(String(i))
        case .double(let d): out.append(formatDouble(d))
        case .string(let s): writeString(s, into: &out)
        case .array(let a):
            if a.isEmpty { out.append("[]"); return }
            out.append("[")
            for (n, e) in a.enumerated() {
                if n > 0 { out.append(",") }
                if pretty { out.append("\n"); out.append(String(repeating: " ", count: indent + 2)) }
                write(e, into: &out, indent: indent + 2, pretty: pretty)
            }
            if pretty { out.append("\n"); out.append(String(repeating: " ", count: indent)) }
            out.append("]")
        case .object(let o):
            if o.isEmpty { out.append("{}"); return }
            out.append("{")
            for (n, k) in sortedKeys(o).enumerated() {
                if n > 0 { out.append(",") }
                if pretty { out.append("\n"); out.append(String(repeating: " ", count: indent + 2)) }
                writeString(k, into: &out)
                out.append(pretty ? ": " : ":")
                write(o[k]!, into: &out, indent: indent + 2, pretty: pretty)
            }
            if pretty { out.append("\n"); out.append(String(repeating: " ", count: indent)) }
            out.append("}")
        }
    }

    static func formatDouble(_ d: Double) -> String {
        if !d.isFinite { return "null" }
        if d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) + ".0" }
        return "\(d)"
    }

    static func writeString(_ s: String, into out: inout String) {
        out.append("\"")
        // Most strings need no escaping: copy them whole. (U+2028/2029 start with 0xE2.)
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }) {
            out.append(s)
            out.append("\"")
            return
        }
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
        out.append("\"")
    }
}
