extension StringProtocol {
    /// Whether every UTF-8 byte passes `test`, checked in the string's own buffer when it has
    /// one: through the UTF-8 view's iterator it costs several times more, and names and tokens
    /// are checked on every request a server answers.
    package func allUTF8(_ test: (UInt8) -> Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.allSatisfy(test) } ?? utf8.allSatisfy(test)
    }

    /// FNV-1a (64 bits) of the UTF-8 bytes, from `seed`: a cheap hash for ck's own names and
    /// paths, which no one chooses to collide.
    package func fnv1a(seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var h = seed
        func mix(_ b: UInt8) { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        if utf8.withContiguousStorageIfAvailable({ $0.forEach(mix) }) == nil { utf8.forEach(mix) }
        return h
    }
}
