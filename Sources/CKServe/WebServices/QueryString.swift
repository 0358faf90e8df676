/// A request's query string as CloudKit JS writes it: `name=value` pairs joined by `&`, values
/// percent-encoded (`encodeURIComponent`). `+` is a plus, not a space: tokens are not form
/// data.
struct QueryString: Sendable {
    private var pairs: [(String, String)] = []

    init(_ raw: String) {
        // By bytes: '&' and '=' are ASCII, and splitting Characters costs grapheme breaking.
        let bytes = raw.utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            if start < end {
                let part = raw[start..<end]
                let eq = part.utf8.firstIndex(of: UInt8(ascii: "="))
                let name = Self.decode(eq.map { part[..<$0] } ?? part)
                let value = Self.decode(eq.map { part[part.utf8.index(after: $0)...] } ?? "")
                if let name, let value { pairs.append((name, value)) }
            }
            start = end < bytes.endIndex ? bytes.index(after: end) : end
        }
    }

    /// The first value of `name`.
    subscript(name: String) -> String? { pairs.first { $0.0 == name }?.1 }

    /// Every value of `name`, in order.
    func values(_ name: String) -> [String] { pairs.filter { $0.0 == name }.map(\.1) }

    /// Percent-decoding; nil for a malformed escape or bytes that are not UTF-8.
    static func decode(_ s: Substring) -> String? {
        if !s.utf8.contains(UInt8(ascii: "%")) { return String(s) }
        var out: [UInt8] = []
        var bytes = s.utf8.makeIterator()
        while let b = bytes.next() {
            guard b == UInt8(ascii: "%") else { out.append(b); continue }
            guard let h = bytes.next().flatMap(hex), let l = bytes.next().flatMap(hex) else { return nil }
            out.append(h << 4 | l)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case 48...57: return b - 48
        case 65...70: return b - 55
        case 97...102: return b - 87
        default: return nil
        }
    }
}
