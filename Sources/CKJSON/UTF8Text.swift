/// Text from bytes that must be UTF-8: a name read back from an index line or a path, a JSON
/// string with escapes. ASCII, which most names are, is taken as it is; anything else is
/// validated. `String(validating:as:)` alone is generic, and each call looked up its witnesses
/// (about 340 instructions, once for every record a query page names).
package enum UTF8Text {
    /// The text of `bytes`; nil when they are not UTF-8.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var high: UInt8 = 0
        for b in bytes { high |= b }
        return high < 0x80 ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    package static func string(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBufferPointer { string($0) } }
}
