/// A P-256 private key, for signing with ECDSA-SHA256: a CloudKit server-to-server key, whose
/// public half is registered with the container and whose signatures over
/// `date:base64(sha256(body)):path` authenticate requests.
///
/// What is constant-time and what is not (on x86-64 and arm64, where a 64×64-bit multiplication
/// takes the same time for every operand):
/// - k·G and d·G: a fixed 4-bit window (256 doublings, 64 additions, for every scalar) with the
///   complete formulas of `P256ProjectivePoint`, and each window's multiple of G read by scanning
///   the whole table with masks. No branch and no memory address depends on the scalar's bits.
/// - The field and scalar arithmetic under them (`Residue`'s product, sum and difference):
///   written without branches (the final subtractions pick by mask).
/// - k⁻¹ mod n and Z⁻¹ mod p: Fermat, x^(m-2), whose squarings and products follow the bits of
///   the public exponent only.
/// - RFC 6979's HMAC-SHA256 of d and the digest: SHA-256 has no data-dependent branch or table.
///
/// Not constant-time: refusing a scalar that is 0 or ≥ n (`init(scalar:)`, the PEM parsers);
/// the loops that skip a candidate nonce or generated scalar ≥ n (about 2^-32 likely) or a
/// signature with r or s = 0 (about 2^-256), each revealing only that it happened; the PEM,
/// base64 and DER reading and writing around the key (base64 looks up a table by the key's bytes). Nothing is zeroed: the scalar and the HMAC state live in ordinary
/// Swift values and arrays, which may leave copies in freed memory.
///
/// The compiler could turn branch-free source into branches. The release build's x86-64 code was
/// read once: the field and scalar products, `init(reducing:)`, the point sum and
/// double have no conditional jump; the table look-up's only one is its loop counter; the
/// signing function's are its loop counters and the checks for r = 0, s = 0 and infinity. Not
/// measured: timing itself, or other compilers and architectures.
public struct P256PrivateKey: Sendable {
    /// d, in 1…n-1.
    let scalar: UInt256
    public let publicKey: P256PublicKey

    /// The 32-byte big-endian scalar d, 1 ≤ d < n. Fewer bytes are read as if padded with
    /// leading zeros.
    public init(scalar bytes: [UInt8]) throws {
        guard let d = UInt256(bigEndian: bytes) else {
            throw P256Error("a P-256 private key is 32 bytes, not \(bytes.count)")
        }
        try self.init(scalar: d)
    }

    init(scalar d: UInt256) throws {
        guard P256Signature.inRange(d) else {
            throw P256Error(d.isZero ? "the private key is 0, which is not a key" : "the private key is not below the group order n")
        }
        // 1 ≤ d < n, so d·G is never the point at infinity.
        guard let point = P256ProjectivePoint.multiplyGenerator(secret: d).affine else {
            throw P256Error("the private key is not in 1…n-1")
        }
        scalar = d
        publicKey = P256PublicKey(point: point)
    }

    /// A new key: 32 bytes from the system's random source (`SystemRandomNumberGenerator`, which
    /// is getrandom(2) on Linux and arc4random on Apple's systems), drawn again while they are 0
    /// or ≥ n, so d is uniform in 1…n-1.
    public static func generate() throws -> P256PrivateKey {
        var random = SystemRandomNumberGenerator()
        // A draw is refused with probability about 2^-32; 64 refusals in a row mean the source is broken.
        for _ in 0..<64 {
            let d = UInt256(w0: random.next(), w1: random.next(), w2: random.next(), w3: random.next())
            if P256Signature.inRange(d) { return try P256PrivateKey(scalar: d) }
        }
        throw P256Error("the system's random source gave 64 numbers in a row outside 1…n-1; it is not random")
    }

    /// The ECDSA signature (FIPS 186-4 6.4) of a SHA-256 digest, with k from RFC 6979 (HMAC-SHA256):
    /// the same digest gives the same signature. s is not normalised to the lower half of n, so
    /// RFC 6979's own vectors come out exactly; verifiers of P-256 (openssl, CloudKit) take
    /// either. The digest is read as verification reads it: its leftmost 32 bytes, as an integer.
    public func signature(digest: [UInt8]) -> P256Signature {
        var nonces = P256Nonces(privateKey: scalar, digest: digest)
        while true {
            if let signature = signature(digest: digest, nonce: nonces.next()) { return signature }
        }
    }

    /// SHA-256 of the message, then `signature(digest:)`.
    public func signature(for message: [UInt8]) -> P256Signature {
        signature(digest: SHA256.digest(message))
    }

    /// The signature with this nonce k (1 ≤ k < n), or nil in the two cases ECDSA starts again
    /// with another k: r = 0 or s = 0.
    func signature(digest: [UInt8], nonce k: UInt256) -> P256Signature? {
        // 1 ≤ k < n: k·G is not at infinity.
        guard let point = P256ProjectivePoint.multiplyGenerator(secret: k).affine else { return nil }
        // x < p < 2n: one conditional subtraction reduces it.
        let r = P256.Scalar(reducing: point.x.value)
        guard !r.isZero else { return nil }
        let e = P256.Scalar(reducing: P256Nonces.bits2int(digest))
        let d = P256.Scalar(reducing: scalar)
        let s = P256.Scalar(reducing: k).inverse() * (e + r * d)
        guard !s.isZero else { return nil }
        return P256Signature(r: r.value, s: s.value)
    }
}

extension P256PrivateKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // A key printed, logged or dumped shows its public half, never d.
    public var description: String { "P256PrivateKey(public: \(Hex.string(publicKey.x963)))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey]) }
}
