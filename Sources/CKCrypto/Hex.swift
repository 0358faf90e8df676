/// Lower-case hexadecimal, as digests, tokens and stored names are written.
public enum Hex {
    /// Inlinable, so each caller gets it made for its own collection: unspecialized, across
    /// modules, it cost about 1,500 instructions a byte (a first command built 256 shard names
    /// with it: half a million instructions).
    @inlinable
    public static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digit(b >> 4))
            out.append(digit(b & 15))
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inlinable
    static func digit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x57 + v }
}
