import CKJSON

/// A request's query string as CloudKit JS writes it: `name=value` pairs joined by `&`, values
/// percent-encoded (`encodeURIComponent`). `+` is a plus, not a space: tokens are not form
/// data.
struct QueryString: Sendable {
    private var pairs: [(String, String)] = []

    init(_ raw: String) {
        // By bytes, in the string's own buffer: '&' and '=' are ASCII, splitting Characters
        // costs grapheme breaking, and a search through String.UTF8View's indices cost a
        // lookup 3% of its time.
        var raw = raw
        raw.makeContiguousUTF8()
        pairs = raw.utf8.withContiguousStorageIfAvailable { bytes -> [(String, String)] in
            var pairs: [(String, String)] = []
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
                if start < end {
                    let eq = bytes[start..<end].firstIndex(of: UInt8(ascii: "=")) ?? end
                    let name = Self.decode(UnsafeBufferPointer(rebasing: bytes[start..<eq]))
                    let value = eq < end ? Self.decode(UnsafeBufferPointer(rebasing: bytes[(eq + 1)..<end])) : ""
                    if let name, let value { pairs.append((name, value)) }
                }
                start = end + 1
            }
            return pairs
        } ?? []
    }

    /// The first value of `name`.
    subscript(name: String) -> String? { pairs.first { $0.0 == name }?.1 }

    /// Every value of `name`, in order.
    func values(_ name: String) -> [String] { pairs.filter { $0.0 == name }.map(\.1) }

    /// Percent-decoding; nil for a malformed escape or bytes that are not UTF-8.
    static func decode(_ s: UnsafeBufferPointer<UInt8>) -> String? {
        // ASCII (a token, a container) needs no validating (UTF8Text): the generic check cost
        // more than the rest of the query string.
        guard s.contains(UInt8(ascii: "%")) else { return UTF8Text.string(s) }
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var bytes = s.makeIterator()
        while let b = bytes.next() {
            guard b == UInt8(ascii: "%") else { out.append(b); continue }
            guard let h = bytes.next().flatMap(hex), let l = bytes.next().flatMap(hex) else { return nil }
            out.append(h << 4 | l)
        }
        return UTF8Text.string(out)
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
