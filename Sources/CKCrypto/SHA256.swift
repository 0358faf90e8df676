/// SHA-256 (FIPS 180-4). Foundation on Linux has no digest API and ck takes no packages, so the
/// content-addressed asset store and long-name hashing use this small implementation (the
/// rounds are `SHA256Stream`'s; this is the one-shot form).
public enum SHA256 {
    public static func digest<C: Collection>(_ input: C) -> [UInt8] where C.Element == UInt8 {
        var s = SHA256Stream()
        if let done = input.withContiguousStorageIfAvailable({ s.update(UnsafeRawBufferPointer($0)) }) { _ = done } else { s.update(Array(input)) }
        return s.finish()
    }

    public static func hex<C: Collection>(_ input: C) -> String where C.Element == UInt8 {
        Hex.string(digest(input))
    }
}
