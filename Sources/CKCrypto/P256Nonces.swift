/// The nonces k of deterministic ECDSA (RFC 6979 section 3.2) for P-256 with HMAC-SHA256: a
/// function of the private key and the digest alone, so signing needs no random source and the
/// same message signed twice gives the same signature. `next()` gives the first candidate k in
/// 1…n-1 and, called again (when r or s came out 0), the next one, as step h prescribes.
///
/// The HMACs see the secret d, and SHA-256 has no branch or table on its data; the loop that
/// skips a candidate ≥ n (probability about 2^-32) branches on that comparison alone.
struct P256Nonces {
    private var key: [UInt8]
    private var value: [UInt8]
    private var started = false

    /// d is the private scalar (1 ≤ d < n); the digest is read as ECDSA reads it (its leftmost
    /// 32 bytes as an integer), which for qlen = 256 is RFC 6979's bits2int.
    init(privateKey d: UInt256, digest: [UInt8]) {
        let x = d.bigEndianBytes                                     // int2octets(x)
        let h = P256.Scalar(reducing: P256Nonces.bits2int(digest)).value.bigEndianBytes  // bits2octets(h1)
        value = [UInt8](repeating: 0x01, count: 32)                  // step b
        key = [UInt8](repeating: 0x00, count: 32)                    // step c
        key = HMAC.sha256(key: key, message: value + [0x00] + x + h)  // step d
        value = HMAC.sha256(key: key, message: value)                // step e
        key = HMAC.sha256(key: key, message: value + [0x01] + x + h)  // step f
        value = HMAC.sha256(key: key, message: value)                // step g
    }

    /// The next k in 1…n-1 (step h).
    mutating func next() -> UInt256 {
        while true {
            if started {
                key = HMAC.sha256(key: key, message: value + [0x00])
                value = HMAC.sha256(key: key, message: value)
            }
            started = true
            // qlen = hlen = 256: one HMAC gives T, all of whose bits are k's.
            value = HMAC.sha256(key: key, message: value)
            let candidate = UInt256(bigEndian: value) ?? .zero
            if P256Signature.inRange(candidate) { return candidate }
        }
    }

    /// The leftmost 256 bits of the digest as an integer (a shorter one is read whole, unshifted).
    static func bits2int(_ digest: [UInt8]) -> UInt256 {
        UInt256(bigEndian: digest.prefix(32)) ?? .zero
    }
}
