/// The DER that `DERReader` reads, written: the few elements of a key and an ECDSA signature,
/// each with the minimal length DER requires.
enum DERWriter {
    /// tag, length, contents.
    static func element(_ tag: DERReader.Tag, _ contents: [UInt8]) -> [UInt8] {
        let n = contents.count
        var length: [UInt8]
        if n < 0x80 {
            length = [UInt8(n)]
        } else {
            var bytes: [UInt8] = []
            var rest = n
            while rest > 0 { bytes.insert(UInt8(rest & 0xff), at: 0); rest >>= 8 }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag.rawValue] + length + contents
    }

    /// A non-negative INTEGER from its big-endian magnitude: leading zeros dropped, and one zero
    /// put back before a high bit (which would otherwise make it negative).
    static func unsignedInteger<C: Collection>(_ magnitude: C) -> [UInt8] where C.Element == UInt8 {
        var contents = Array(magnitude.drop { $0 == 0 })
        if contents.isEmpty || contents[0] & 0x80 != 0 { contents.insert(0, at: 0) }
        return element(.integer, contents)
    }

    static func sequence(_ elements: [UInt8]...) -> [UInt8] {
        element(.sequence, elements.flatMap { $0 })
    }
}
