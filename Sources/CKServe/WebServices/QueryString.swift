/// A request's query string as CloudKit JS writes it: `name=value` pairs joined by `&`, values
/// percent-encoded (`encodeURIComponent`). `+` is a plus, not a space: tokens are not form
/// data.
struct QueryString {
    private var pairs: [(String, String)] = []

    init(_ raw: String) {
        // By bytes: '&' and '=' are ASCII, and splitting Characters costs grapheme breaking.
        for part in raw.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let kv = part.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(Substring(kv[0])), let value = Self.decode(kv.count == 2 ? Substring(kv[1]) : "") else { continue }
            pairs.append((name, value))
        }
    }

    /// The first value of `name`.
    subscript(name: String) -> String? { pairs.first { $0.0 == name }?.1 }

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
