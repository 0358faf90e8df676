import Foundation

/// A P-256 public key, for verifying ECDSA-SHA256 signatures: the server-to-server keys of
/// CloudKit Web Services (`openssl ecparam -name prime256v1 -genkey`, the public half registered
/// from `openssl ec -pubout`). Written here because ck takes no packages.
///
/// Every initializer checks the point: coordinates below p, on the curve, not the point at
/// infinity (P-256's cofactor is 1, so that is the whole validation of SP 800-56A 5.6.2.3.3).
/// Refusals are `P256Error`s naming the problem; no input traps.
///
/// Verification is not constant-time. It does not need to be: a public key, a message and a
/// signature are all public. Nothing here may be used with a private key.
public struct P256PublicKey: Equatable, Sendable {
    let point: P256AffinePoint

    /// A PEM "PUBLIC KEY" block (SubjectPublicKeyInfo, as `openssl ec -pubout` writes it and the
    /// CloudKit Console takes it), or the base64 of that block's body alone. Other blocks in the
    /// text (such as `EC PARAMETERS`) are skipped; a private key is refused, not used.
    public init(pem: String) throws {
        let blocks: [PEM.Block]
        do { blocks = try PEM.blocks(pem) } catch let failure as PEM.Failure { throw P256Error("not a PEM public key: \(failure.message)") }
        if let block = blocks.first(where: { $0.label == "PUBLIC KEY" }) {
            try self.init(der: block.der)
        } else if let other = blocks.first {
            if other.label.hasSuffix("PRIVATE KEY") {
                throw P256Error("this is a private key (\(other.label)); give the public key, which `openssl ec -in KEY.pem -pubout` prints")
            }
            throw P256Error("no PUBLIC KEY block (found \(blocks.map(\.label).joined(separator: ", ")))")
        } else {
            let body = pem.filter { !$0.isWhitespace }
            guard !body.isEmpty, let data = Data(base64Encoded: body) else {
                throw P256Error("not a PEM public key: no '-----BEGIN PUBLIC KEY-----' line")
            }
            try self.init(der: [UInt8](data))
        }
    }

    /// A DER SubjectPublicKeyInfo (RFC 5480): algorithm id-ecPublicKey with the named curve
    /// prime256v1, and the point in a BIT STRING.
    public init(der: [UInt8]) throws {
        let pointBytes: ArraySlice<UInt8>
        do {
            var outer = DERReader(der)
            var info = DERReader(try outer.read(.sequence))
            try outer.expectEnd("SubjectPublicKeyInfo")
            var algorithm = DERReader(try info.read(.sequence))
            let algorithmOID = try algorithm.read(.objectIdentifier)
            guard algorithmOID.elementsEqual(P256PublicKey.idECPublicKey) else {
                throw P256Error("not an elliptic-curve key: its algorithm is \(P256PublicKey.describeOID(algorithmOID)), not id-ecPublicKey (1.2.840.10045.2.1)")
            }
            guard let parametersTag = algorithm.nextTag else {
                throw P256Error("the key names no curve (id-ecPublicKey without parameters)")
            }
            guard parametersTag == DERReader.Tag.objectIdentifier.rawValue else {
                throw P256Error("the key's curve is not given by name (explicit parameters are not supported; make the key with -name prime256v1)")
            }
            let curveOID = try algorithm.read(.objectIdentifier)
            guard curveOID.elementsEqual(P256PublicKey.prime256v1) else {
                throw P256Error("the key's curve is \(P256PublicKey.describeOID(curveOID)), not P-256 (prime256v1, 1.2.840.10045.3.1.7)")
            }
            try algorithm.expectEnd("curve name")
            let bits = try info.read(.bitString)
            try info.expectEnd("public key")
            guard bits.first == 0 else { throw P256Error("the public key's BIT STRING does not start with 0 unused bits") }
            pointBytes = bits.dropFirst()
        } catch let failure as DERReader.Failure {
            throw P256Error("not a DER SubjectPublicKeyInfo: \(failure.message)")
        }
        try self.init(x963: Array(pointBytes))
    }

    /// A point as SEC 1 (X9.62) encodes it: uncompressed `04‖X‖Y` (65 bytes) or compressed
    /// `02‖X` / `03‖X` (33 bytes, 02 for an even y).
    public init(x963: [UInt8]) throws {
        switch (x963.first, x963.count) {
        case (0x04, 65):
            guard let xValue = UInt256(bigEndian: x963[1..<33]), let x = P256.FieldElement(exactly: xValue),
                  let yValue = UInt256(bigEndian: x963[33..<65]), let y = P256.FieldElement(exactly: yValue) else {
                throw P256Error("the public key's coordinates are not below the field prime p")
            }
            guard let point = P256AffinePoint(checking: x, y) else { throw P256Error("the public key is not a point on P-256") }
            self.point = point
        case (0x02, 33), (0x03, 33):
            guard let xValue = UInt256(bigEndian: x963[1..<33]), let x = P256.FieldElement(exactly: xValue) else {
                throw P256Error("the public key's x coordinate is not below the field prime p")
            }
            guard var y = P256.squareRoot(P256.curveRightSide(x)) else { throw P256Error("the public key is not a point on P-256") }
            if y.value.bit(0) != (x963[0] == 0x03) { y = .zero - y }
            guard let point = P256AffinePoint(checking: x, y) else { throw P256Error("the public key is not a point on P-256") }
            self.point = point
        case (0x00, 1):
            throw P256Error("the point at infinity is not a public key")
        case (nil, _):
            throw P256Error("the public key is empty")
        default:
            throw P256Error("the public key is not a P-256 point: expected 04‖X‖Y (65 bytes) or 02/03‖X (33 bytes), found \(x963.count) bytes starting 0x\(Hex.string([x963[0]]))")
        }
    }

    /// The uncompressed point `04‖X‖Y`.
    public var x963: [UInt8] { [0x04] + point.x.value.bigEndianBytes + point.y.value.bigEndianBytes }

    /// Whether `signature` signs this digest under this key (ECDSA verification, FIPS 186-4
    /// 6.4.2). The digest is converted as ECDSA says: its leftmost 256 bits, as an integer, mod n
    /// (a SHA-256 digest is used whole).
    public func isValidSignature(_ signature: P256Signature, digest: [UInt8]) -> Bool {
        // P256Signature only holds r and s in 1…n-1; checked again, since everything below
        // depends on it (s must be invertible).
        guard P256Signature.inRange(signature.r), P256Signature.inRange(signature.s),
              let e = UInt256(bigEndian: digest.prefix(32)),
              let r = P256.Scalar(exactly: signature.r), let s = P256.Scalar(exactly: signature.s) else { return false }
        let w = s.inverse()
        let u1 = P256.Scalar(reducing: e) * w
        let u2 = r * w
        let sum = P256JacobianPoint.multiplyGenerator(by: u1.value, adding: u2.value, times: P256JacobianPoint(point))
        guard !sum.isInfinity else { return false }
        // Accept iff x mod n = r, x being the affine X/Z². With no inversion: x < p < 2n, so
        // x mod n = r means x = r or x = r + n (possible only when r + n < p), and x = c means
        // X = c·Z² (mod p).
        let z2 = sum.z.squared()
        guard let rModP = P256.FieldElement(exactly: signature.r) else { return false }
        if rModP * z2 == sum.x { return true }
        let (rPlusN, carry) = signature.r.addingReportingCarry(P256Order.modulus)
        guard carry == 0, let rPlusNModP = P256.FieldElement(exactly: rPlusN) else { return false }
        return rPlusNModP * z2 == sum.x
    }

    /// Whether `der` is a DER ECDSA signature of this digest under this key; false for a
    /// signature that is not well-formed DER.
    public func isValidSignature(_ der: [UInt8], digest: [UInt8]) -> Bool {
        guard let signature = try? P256Signature(der: der) else { return false }
        return isValidSignature(signature, digest: digest)
    }

    /// Whether `der` is a DER ECDSA-SHA256 signature of `message` under this key. A signature
    /// that is not well-formed is refused before the message is hashed.
    public func isValidSignature(_ der: [UInt8], for message: [UInt8]) -> Bool {
        guard let signature = try? P256Signature(der: der) else { return false }
        return isValidSignature(signature, digest: SHA256.digest(message))
    }

    /// 1.2.840.10045.2.1, id-ecPublicKey (the contents of the OBJECT IDENTIFIER).
    static let idECPublicKey: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]
    /// 1.2.840.10045.3.1.7, prime256v1 (secp256r1).
    static let prime256v1: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]

    /// An OBJECT IDENTIFIER in dotted form, for messages; its hex if it does not decode.
    static func describeOID(_ contents: ArraySlice<UInt8>) -> String {
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        for byte in contents {
            guard value < 1 << 56 else { return "0x" + Hex.string(contents) }
            value = value << 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 { arcs.append(value); value = 0 }
        }
        guard let first = arcs.first, contents.last.map({ $0 & 0x80 == 0 }) == true else { return "0x" + Hex.string(contents) }
        let head: [UInt64] = first < 80 ? [first / 40, first % 40] : [2, first - 80]
        let dotted = (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
        let names = ["1.2.840.113549.1.1.1": "rsaEncryption", "1.3.101.112": "Ed25519", "1.3.101.110": "X25519",
                     "1.3.132.0.34": "secp384r1", "1.3.132.0.35": "secp521r1", "1.3.132.0.10": "secp256k1"]
        return names[dotted].map { "\($0) (\(dotted))" } ?? dotted
    }
}

extension P256PublicKey {
    /// A point made by this module's arithmetic (a private key's d·G), on the curve by construction.
    init(point: P256AffinePoint) { self.point = point }

    /// The DER SubjectPublicKeyInfo: id-ecPublicKey, prime256v1, the uncompressed point.
    public var der: [UInt8] {
        DERWriter.sequence(
            DERWriter.sequence(DERWriter.element(.objectIdentifier, P256PublicKey.idECPublicKey),
                               DERWriter.element(.objectIdentifier, P256PublicKey.prime256v1)),
            DERWriter.element(.bitString, [0] + x963))
    }

    /// The PEM "PUBLIC KEY" block, byte for byte what `openssl ec -pubout` writes: what the
    /// CloudKit Console and `ck server-key add` take.
    public var pem: String { PEM.armor(label: "PUBLIC KEY", der: der) }
}
