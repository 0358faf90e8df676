/// An ECDSA signature over P-256: the integers r and s, each in 1…n-1 (n the group order).
/// Read from DER (`SEQUENCE { INTEGER r, INTEGER s }`, what openssl, Node's crypto and CloudKit's
/// server-to-server clients send) or from the raw 64 bytes r‖s (WebCrypto, JWS). Anything else
/// — bad DER, bytes after it, an integer negative, non-minimal, longer than 32 bytes or out of
/// range — is refused with a `P256Error` saying what is wrong.
public struct P256Signature: Equatable, Sendable {
    let r: UInt256
    let s: UInt256

    public init(der: [UInt8]) throws {
        do {
            var outer = DERReader(der)
            var sequence = DERReader(try outer.read(.sequence))
            try outer.expectEnd("signature's SEQUENCE")
            let r = try sequence.readUnsignedInteger()
            let s = try sequence.readUnsignedInteger()
            try sequence.expectEnd("integers r and s")
            try self.init(r: r, s: s)
        } catch let failure as DERReader.Failure {
            throw P256Error("the signature is not a DER ECDSA signature: \(failure.message)")
        }
    }

    /// For r and s already in 1…n-1 (the signer's).
    init(r: UInt256, s: UInt256) {
        self.r = r
        self.s = s
    }

    /// r‖s, 32 big-endian bytes each.
    public init(raw: [UInt8]) throws {
        guard raw.count == 64 else { throw P256Error("a raw P-256 signature is 64 bytes (r‖s), not \(raw.count)") }
        try self.init(r: raw[0..<32], s: raw[32..<64])
    }

    private init(r rBytes: ArraySlice<UInt8>, s sBytes: ArraySlice<UInt8>) throws {
        guard let r = UInt256(bigEndian: rBytes) else { throw P256Error("r is longer than 32 bytes") }
        guard let s = UInt256(bigEndian: sBytes) else { throw P256Error("s is longer than 32 bytes") }
        guard P256Signature.inRange(r) else { throw P256Error("r is not in 1…n-1") }
        guard P256Signature.inRange(s) else { throw P256Error("s is not in 1…n-1") }
        self.r = r
        self.s = s
    }

    /// r‖s, 64 bytes.
    public var raw: [UInt8] { r.bigEndianBytes + s.bigEndianBytes }

    /// `SEQUENCE { INTEGER r, INTEGER s }` with minimal integers: what openssl writes and
    /// CloudKit's SignatureV1 header carries (in base64).
    public var der: [UInt8] {
        DERWriter.sequence(DERWriter.unsignedInteger(r.bigEndianBytes), DERWriter.unsignedInteger(s.bigEndianBytes))
    }

    static func inRange(_ x: UInt256) -> Bool { !x.isZero && x < P256Order.modulus }
}

/// Why a P-256 key or signature was refused.
public struct P256Error: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
