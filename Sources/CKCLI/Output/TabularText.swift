/// Writes flat rows (TabularRows) as an aligned table, CSV or TSV. All three have a header
/// row of the column names as they are (camelCase) and the same cells.
enum TabularText {
    /// Aligned columns, two spaces apart, for people. Cells are escaped as in TSV (so a cell
    /// is always one line and cannot move the cursor), control characters beyond those as
    /// `\u0085`.
    static func table(_ columns: [String], _ rows: [[String: String]]) -> String {
        if columns.isEmpty { return "" }
        let header = columns.map { escaped($0, forTerminal: true) }
        let body = rows.map { r in columns.map { escaped(r[$0] ?? "", forTerminal: true) } }
        var widths = header.map(displayWidth)
        for r in body { for (i, c) in r.enumerated() { widths[i] = max(widths[i], displayWidth(c)) } }
        var out = ""
        for cells in [header] + body {
            var line = ""
            for (i, c) in cells.enumerated() {
                line += c
                if i < cells.count - 1 { line += String(repeating: " ", count: widths[i] - displayWidth(c) + 2) }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }

    /// RFC 4180: comma-separated, CRLF line ends, a cell with a comma, a double quote, CR or
    /// LF in double quotes with its quotes doubled; everything else as it is.
    static func csv(_ columns: [String], _ rows: [[String: String]]) -> String {
        if columns.isEmpty { return "" }
        var out = columns.map(csvField).joined(separator: ",") + "\r\n"
        for r in rows { out += columns.map { csvField(r[$0] ?? "") }.joined(separator: ",") + "\r\n" }
        return out
    }

    /// Tab-separated, LF line ends, one line per row: backslash, tab, newline and carriage
    /// return as `\\`, `\t`, `\n`, `\r` (and `\b`, `\f`, `\v`, other control characters as
    /// `\x1b`), the text format of PostgreSQL's COPY.
    static func tsv(_ columns: [String], _ rows: [[String: String]]) -> String {
        if columns.isEmpty { return "" }
        var out = columns.map { escaped($0, forTerminal: false) }.joined(separator: "\t") + "\n"
        for r in rows { out += columns.map { escaped(r[$0] ?? "", forTerminal: false) }.joined(separator: "\t") + "\n" }
        return out
    }

    static func csvField(_ s: String) -> String {
        // By scalars: "\r\n" is one Character, which contains neither "\r" nor "\n".
        guard s.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// TSV escaping; `forTerminal` also escapes C1 control characters (U+0080–U+009F), which
    /// some terminals obey.
    static func escaped(_ s: String, forTerminal: Bool) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\\" || $0.value == 0x7F || (0x80...0x9F).contains($0.value) })
        else { return s }
        var out = String.UnicodeScalarView()
        func add(_ t: String) { out.append(contentsOf: t.unicodeScalars) }
        for u in s.unicodeScalars {
            switch u.value {
            case 0x5C: add("\\\\")
            case 0x0A: add("\\n")
            case 0x0D: add("\\r")
            case 0x09: add("\\t")
            case 0x08: add("\\b")
            case 0x0C: add("\\f")
            case 0x0B: add("\\v")
            case 0..<0x20, 0x7F: add("\\x" + hex(u.value, 2))
            case 0x80...0x9F where forTerminal: add("\\u" + hex(u.value, 4))
            default: out.append(u)
            }
        }
        return String(out)
    }

    private static func hex(_ v: UInt32, _ width: Int) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// Terminal columns a string takes: East Asian wide characters and emoji two, combining
    /// marks none (they belong to their grapheme), everything else one.
    static func displayWidth(_ s: String) -> Int {
        var w = 0
        for ch in s {
            guard let u = ch.unicodeScalars.first?.value else { continue }
            let wide = (0x1100...0x115F).contains(u) || (0x2E80...0xA4CF).contains(u) && u != 0x303F
                || (0xAC00...0xD7A3).contains(u) || (0xF900...0xFAFF).contains(u) || (0xFE30...0xFE4F).contains(u)
                || (0xFF00...0xFF60).contains(u) || (0xFFE0...0xFFE6).contains(u)
                || (0x1F300...0x1F64F).contains(u) || (0x1F900...0x1F9FF).contains(u) || (0x20000...0x3FFFD).contains(u)
            w += wide ? 2 : 1
        }
        return w
    }
}
