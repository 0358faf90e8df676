import CKTestSupport
import Foundation
import XCTest
@testable import CKCrypto

/// ECDSA P-256 signing (P256PrivateKey), which ck needs as a client of CloudKit Web Services with
/// a server-to-server key: RFC 6979's vectors, round trips through the verifier, the key files
/// openssl writes and reads, and the keys that must be refused.
final class P256SigningTests: XCTestCase {

    // MARK: - Known answers

    /// RFC 6979 appendix A.2.5 (P-256, SHA-256), and C2SP's CCTV vector for the same key whose
    /// first candidate k is ≥ n, so that RFC 6979's step h has to run once.
    static let rfc6979Key = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"
    static let rfc6979Vectors: [(message: String, k: String, r: String, s: String)] = [
        ("sample", "a6e3c57dd01abe90086538398355dd4c3b17aa873382b0f24d6129493d8aad60",
         "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716", "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"),
        ("test", "d16b6ae827f17175e040871a1c7ec3500192c4c92677336ec2537acaee0008e0",
         "f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367", "019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083"),
        ("wv[vnX", "2ae40df9d9dab61d688de3dcb9867a98ecc70dd4d6c0f6c228b6e4e0b18b29bc",
         "efd9073b652e76da1b5a019c0e4a2e3fa529b035a6abb91ef67f0ed7a1f21234", "3db4706c9d9f4a4fe13bb5e08ef0fab53a57dbab2061c83a35fa411c68d2ba33"),
    ]

    func testRFC6979Vectors() throws {
        let key = try P256PrivateKey(scalar: bytes(Self.rfc6979Key))
        XCTAssertEqual(Hex.string(key.publicKey.x963), "04"
            + "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
            + "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299")
        for v in Self.rfc6979Vectors {
            let digest = SHA256.digest(Array(v.message.utf8))
            var nonces = P256Nonces(privateKey: key.scalar, digest: digest)
            XCTAssertEqual(Hex.string(nonces.next().bigEndianBytes), v.k, v.message)
            let signature = key.signature(for: Array(v.message.utf8))
            XCTAssertEqual(Hex.string(signature.raw), v.r + v.s, v.message)
            XCTAssertEqual(key.signature(digest: digest), signature, "\(v.message): by digest, and deterministic")
            XCTAssertTrue(key.publicKey.isValidSignature(signature.der, for: Array(v.message.utf8)), v.message)
        }
    }

    /// Minimal DER integers: a high bit gets a zero byte before it, a leading zero byte goes.
    func testSignatureDER() throws {
        let key = try P256PrivateKey(scalar: bytes(Self.rfc6979Key))
        let sample = key.signature(for: Array("sample".utf8)).der
        XCTAssertEqual(Hex.string(sample), "3046" + "022100" + Self.rfc6979Vectors[0].r + "022100" + Self.rfc6979Vectors[0].s)
        let test = key.signature(for: Array("test".utf8)).der
        XCTAssertEqual(Hex.string(test), "3045" + "022100" + Self.rfc6979Vectors[1].r + "0220" + Self.rfc6979Vectors[1].s)
        // Shorter integers, and one with the high bit set after a dropped zero.
        let small = P256Signature(r: UInt256(1), s: UInt256(0x80))
        XCTAssertEqual(small.der, [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0x80])
        XCTAssertEqual(try P256Signature(der: small.der), small)
        XCTAssertEqual(try P256Signature(der: sample), key.signature(for: Array("sample".utf8)))
    }

    // MARK: - The arithmetic

    /// k·G by the constant-time ladder against the verifier's own (Jacobian, with branches), on
    /// the edges of the window digits and at random; and the complete formulas on their
    /// exceptional cases (P + P, P + (-P), the point at infinity).
    func testSecretScalarMultiplicationAgreesWithTheVerifiers() throws {
        let n = P256Order.modulus
        var scalars: [UInt256] = [UInt256(1), UInt256(2), UInt256(15), UInt256(16), UInt256(17), UInt256(0xffff),
                                  n.subtractingReportingBorrow(UInt256(1)).difference, n.subtractingReportingBorrow(UInt256(2)).difference,
                                  UInt256(w0: 0, w1: 0, w2: 0, w3: 1 << 63), UInt256(w0: .max, w1: .max, w2: .max, w3: 0x0fff_ffff_ffff_ffff)]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20 { scalars.append(UInt256(w0: rng.next(), w1: rng.next(), w2: rng.next(), w3: rng.next() >> 1)) }
        for k in scalars {
            let ours = P256ProjectivePoint.multiplyGenerator(secret: k).affine
            let theirs = P256JacobianPoint.multiplyGenerator(by: k, adding: .zero, times: P256JacobianPoint(P256.generator)).affine
            XCTAssertEqual(ours, theirs, Hex.string(k.bigEndianBytes))
            if let ours { XCTAssertTrue(P256.isOnCurve(x: ours.x, y: ours.y)) }
        }
        XCTAssertNil(P256ProjectivePoint.multiplyGenerator(secret: .zero).affine, "0·G is the point at infinity")
        XCTAssertNil(P256ProjectivePoint.multiplyGenerator(secret: n).affine, "n·G is the point at infinity")

        let g = P256ProjectivePoint(P256.generator)
        let minusG = P256ProjectivePoint(x: g.x, y: .zero - g.y, z: .one)
        XCTAssertEqual(g.adding(g).affine, g.doubled().affine, "P + P")
        XCTAssertEqual(g.adding(g).affine, P256JacobianPoint(P256.generator).doubled().affine)
        XCTAssertNil(g.adding(minusG).affine, "P + (-P)")
        XCTAssertEqual(g.adding(.infinity).affine, P256.generator, "P + ∞")
        XCTAssertEqual(P256ProjectivePoint.infinity.adding(g).affine, P256.generator, "∞ + P")
        XCTAssertNil(P256ProjectivePoint.infinity.doubled().affine, "2·∞")
        // Another representative of the same point, (λX : λY : λZ), gives the same sums.
        let lambda = P256.FieldElement(reducing: UInt256(12345))
        let scaled = P256ProjectivePoint(x: g.x * lambda, y: g.y * lambda, z: lambda)
        XCTAssertEqual(scaled.adding(g).affine, g.doubled().affine)
        for digit in 0..<16 {
            XCTAssertEqual(P256ProjectivePoint.lookUp(P256ProjectivePoint.generatorTable, digit).affine,
                           P256ProjectivePoint.generatorTable[digit].affine, "digit \(digit)")
        }
    }

    // MARK: - Round trips

    func testSignaturesVerifyAndAFlippedBitDoesNot() throws {
        let key = try P256PrivateKey.generate()
        let other = try P256PrivateKey.generate()
        XCTAssertNotEqual(key.publicKey, other.publicKey)
        var rng = SystemRandomNumberGenerator()
        let messages: [[UInt8]] = [[], Array("abc".utf8), [0], (0..<1000).map { _ in UInt8.random(in: 0...255, using: &rng) }]
        for (i, message) in messages.enumerated() {
            let signature = key.signature(for: message)
            XCTAssertEqual(key.signature(for: message), signature, "deterministic")
            XCTAssertTrue(key.publicKey.isValidSignature(signature.der, for: message), "message \(i)")
            XCTAssertTrue(key.publicKey.isValidSignature(signature, digest: SHA256.digest(message)), "message \(i), by digest")
            XCTAssertFalse(other.publicKey.isValidSignature(signature.der, for: message), "message \(i), another key")
            XCTAssertNotEqual(other.signature(for: message), signature)
            for bit in [0, 7, 100, 255] where bit / 8 < message.count {
                var flipped = message
                flipped[bit / 8] ^= 1 << UInt8(bit % 8)
                XCTAssertFalse(key.publicKey.isValidSignature(signature.der, for: flipped), "message \(i), bit \(bit) of the message")
            }
            for bit in [0, 128, 255, 256, 300, 511] {
                var raw = signature.raw
                raw[bit / 8] ^= 1 << UInt8(bit % 8)
                if let flipped = try? P256Signature(raw: raw) {
                    XCTAssertFalse(key.publicKey.isValidSignature(flipped, digest: SHA256.digest(message)), "message \(i), bit \(bit) of r‖s")
                }
            }
        }
    }

    /// A key is d: 1 ≤ d < n, 32 bytes at most.
    func testScalarsOutOfRangeAreRefused() throws {
        let n = P256Order.modulus
        let cases: [([UInt8], String)] = [
            ([UInt8](repeating: 0, count: 32), "is 0"), ([], "is 0"),
            (n.bigEndianBytes, "not below the group order"),
            (n.addingReportingCarry(UInt256(1)).sum.bigEndianBytes, "not below the group order"),
            ([UInt8](repeating: 0xff, count: 32), "not below the group order"),
            ([UInt8](repeating: 1, count: 33), "32 bytes, not 33"),
        ]
        for (scalar, expected) in cases {
            XCTAssertThrowsError(try P256PrivateKey(scalar: scalar)) { XCTAssertTrue("\($0)".contains(expected), "\($0)") }
        }
        XCTAssertNoThrow(try P256PrivateKey(scalar: n.subtractingReportingBorrow(UInt256(1)).difference.bigEndianBytes))
        XCTAssertNoThrow(try P256PrivateKey(scalar: [1]))
    }

    /// Printing, logging or dumping a key shows its public half, never d.
    func testTheScalarIsNeverPrinted() throws {
        let key = try P256PrivateKey(scalar: bytes(Self.rfc6979Key))
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] {
            XCTAssertFalse(text.lowercased().contains("c9afa9d8"), text)
            XCTAssertFalse(text.contains("scalar"), text)
            XCTAssertTrue(text.contains("60fed4ba") || text.contains("publicKey"), text)
        }
    }

    // MARK: - openssl

    /// Keys openssl makes, read here; keys written here, read by openssl and printed back
    /// unchanged; public keys as `openssl ec -pubout` writes them.
    func testKeyFilesAgreeWithOpenSSL() throws {
        let tool = try OpenSSL(self)
        // With the EC PARAMETERS block openssl writes without -noout.
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-out", "k.pem")
        try tool.run("ec", "-in", "k.pem", "-out", "k-sec1.pem")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-out", "pub.pem")
        try tool.run("pkcs8", "-topk8", "-nocrypt", "-in", "k.pem", "-out", "k-pkcs8.pem")
        try tool.run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "genpkey.pem")
        try tool.run("ec", "-in", "genpkey.pem", "-out", "genpkey-sec1.pem")
        try tool.run("ec", "-in", "genpkey.pem", "-pubout", "-out", "genpkey-pub.pem")
        XCTAssertTrue(try tool.text("k.pem").hasPrefix("-----BEGIN EC PARAMETERS-----"))
        XCTAssertTrue(try tool.text("k-pkcs8.pem").hasPrefix("-----BEGIN PRIVATE KEY-----"))

        let key = try P256PrivateKey(pem: tool.text("k.pem"))
        XCTAssertEqual(key.pem, try tool.text("k-sec1.pem"), "byte for byte what openssl ec writes")
        XCTAssertEqual(key.publicKey.pem, try tool.text("pub.pem"), "byte for byte what openssl ec -pubout writes")
        XCTAssertEqual(key.publicKey, try P256PublicKey(pem: tool.text("pub.pem")))
        let pkcs8 = try P256PrivateKey(pem: tool.text("k-pkcs8.pem"))
        XCTAssertEqual(pkcs8.scalar, key.scalar)
        XCTAssertEqual(try P256PrivateKey(pem: tool.text("k-sec1.pem")).scalar, key.scalar)
        let generated = try P256PrivateKey(pem: tool.text("genpkey.pem"))
        XCTAssertEqual(generated.pem, try tool.text("genpkey-sec1.pem"))
        XCTAssertEqual(generated.publicKey.pem, try tool.text("genpkey-pub.pem"))

        // Ours, read by openssl: the same PEM printed back, the same public key.
        let ours = try P256PrivateKey.generate()
        try tool.write("ours.pem", Array(ours.pem.utf8))
        try tool.run("ec", "-in", "ours.pem", "-check", "-out", "ours-back.pem")
        try tool.run("ec", "-in", "ours.pem", "-pubout", "-out", "ours-pub.pem")
        XCTAssertEqual(try tool.text("ours-back.pem"), ours.pem)
        XCTAssertEqual(try tool.text("ours-pub.pem"), ours.publicKey.pem)
        XCTAssertEqual(try P256PrivateKey(pem: ours.pem).scalar, ours.scalar)
        XCTAssertEqual(try P256PublicKey(pem: ours.publicKey.pem), ours.publicKey)
    }

    /// `openssl dgst -sha256 -verify` accepts what we sign, with our key and with openssl's, and
    /// refuses it for another message.
    func testOpenSSLVerifiesOurSignatures() throws {
        let tool = try OpenSSL(self)
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "theirs.pem")
        try tool.run("ec", "-in", "theirs.pem", "-pubout", "-out", "theirs-pub.pem")
        let theirs = try P256PrivateKey(pem: tool.text("theirs.pem"))
        let ours = try P256PrivateKey.generate()
        try tool.write("ours-pub.pem", Array(ours.publicKey.pem.utf8))
        let body = Array(#"{"query":{"recordType":"Items"}}"#.utf8)
        let request = "2026-11-25T13:05:25Z:" + Data(SHA256.digest(body)).base64EncodedString() + ":/database/1/iCloud.x/development/public/records/query"
        let messages: [[UInt8]] = [Array(request.utf8), [], Array("sample".utf8)]
        for (name, key) in [("ours", ours), ("theirs", theirs)] {
            for (i, message) in messages.enumerated() {
                try tool.write("msg", message)
                try tool.write("sig.der", key.signature(for: message).der)
                try tool.run("dgst", "-sha256", "-verify", "\(name)-pub.pem", "-signature", "sig.der", "msg")
                try tool.write("msg", message + [0x20])
                XCTAssertThrowsError(try tool.run("dgst", "-sha256", "-verify", "\(name)-pub.pem", "-signature", "sig.der", "msg"),
                                     "\(name), message \(i): openssl refuses it for another message")
            }
        }
    }

    /// Every key file that is not an unencrypted P-256 private key, refused with what it is.
    func testKeyFilesThatAreNotP256PrivateKeysAreRefused() throws {
        let tool = try OpenSSL(self)
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "k.pem")
        try tool.run("ec", "-in", "k.pem", "-aes256", "-passout", "pass:secret", "-out", "encrypted.pem")
        try tool.run("pkcs8", "-topk8", "-in", "k.pem", "-passout", "pass:secret", "-out", "encrypted-pkcs8.pem")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-out", "pub.pem")
        try tool.run("genrsa", "-out", "rsa.pem", "1024")
        try tool.run("genrsa", "-traditional", "-out", "rsa-traditional.pem", "1024")
        try tool.run("ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", "p384.pem")
        try tool.run("pkcs8", "-topk8", "-nocrypt", "-in", "p384.pem", "-out", "p384-pkcs8.pem")
        try tool.run("genpkey", "-algorithm", "ED25519", "-out", "ed25519.pem")
        let good = try tool.text("k.pem")
        let lines = good.split(separator: "\n").map(String.init)
        let key = try P256PrivateKey(pem: good)

        let cases: [(String, String, String)] = [
            ("encrypted SEC1", try tool.text("encrypted.pem"), "encrypted"),
            ("encrypted PKCS#8", try tool.text("encrypted-pkcs8.pem"), "encrypted"),
            ("public key", try tool.text("pub.pem"), "public key"),
            ("RSA, PKCS#8", try tool.text("rsa.pem"), "rsaEncryption"),
            ("RSA, traditional", try tool.text("rsa-traditional.pem"), "RSA PRIVATE KEY"),
            ("secp384r1", try tool.text("p384.pem"), "secp384r1"),
            ("secp384r1, PKCS#8", try tool.text("p384-pkcs8.pem"), "secp384r1"),
            ("Ed25519", try tool.text("ed25519.pem"), "Ed25519"),
            ("empty", "", "no '-----BEGIN EC PRIVATE KEY-----' line"),
            ("no END line", lines.dropLast().joined(separator: "\n"), "no '-----END EC PRIVATE KEY-----' line"),
            ("body cut short", ([lines[0], lines[1], lines.last!]).joined(separator: "\n"), "not a DER EC private key"),
            ("not base64", [lines[0], "not*base64", lines.last!].joined(separator: "\n"), "not valid base64"),
            ("d = 0", sec1PEM(d: [UInt8](repeating: 0, count: 32)), "is 0"),
            ("d = n", sec1PEM(d: P256Order.modulus.bigEndianBytes), "not below the group order"),
            ("d > n", sec1PEM(d: [UInt8](repeating: 0xff, count: 32)), "not below the group order"),
            ("no curve", sec1PEM(d: key.scalar.bigEndianBytes, curve: false), "names no curve"),
            ("another key's public key", sec1PEM(d: key.scalar.bigEndianBytes, publicKey: try P256PrivateKey.generate().publicKey.x963), "not the private key's"),
            ("version 0", sec1PEM(d: key.scalar.bigEndianBytes, version: 0), "version 00, not 1"),
        ]
        for (name, pem, expected) in cases {
            XCTAssertThrowsError(try P256PrivateKey(pem: pem), name) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
            }
        }
        // The same DER written by hand, well formed, is read: the refusals above are of what they name.
        XCTAssertEqual(try P256PrivateKey(pem: sec1PEM(d: key.scalar.bigEndianBytes, publicKey: key.publicKey.x963)).scalar, key.scalar)
        XCTAssertEqual(try P256PrivateKey(pem: sec1PEM(d: key.scalar.bigEndianBytes)).scalar, key.scalar, "the public key is optional")
    }

    // MARK: - Timing

    func testTimeOfOneSignature() throws {
        let key = try P256PrivateKey(scalar: bytes(Self.rfc6979Key))
        let rounds = 20
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<rounds { _ = key.signature(for: [UInt8(i)]) }
        let each = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds) / 1000
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        print("P-256 signature: \(String(format: "%.0f", each)) µs each (\(build) build, mean of \(rounds))")
    }

    // MARK: - Helpers

    /// An ECPrivateKey in PEM, made by hand.
    func sec1PEM(d: [UInt8], curve: Bool = true, publicKey: [UInt8]? = nil, version: UInt8 = 1) -> String {
        var body = DERWriter.unsignedInteger([version]) + DERWriter.element(.octetString, d)
        if curve { body += DERWriter.element(.context0, DERWriter.element(.objectIdentifier, P256PublicKey.prime256v1)) }
        if let publicKey { body += DERWriter.element(.context1, DERWriter.element(.bitString, [0] + publicKey)) }
        return PEM.armor(label: "EC PRIVATE KEY", der: DERWriter.element(.sequence, body))
    }

    func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8).map { c -> UInt8 in c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10 }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}
