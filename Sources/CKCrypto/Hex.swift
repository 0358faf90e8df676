/// Lower-case hexadecimal, as digests, tokens and stored names are written.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
