import CKTestSupport
import Foundation
import XCTest
@testable import CKCrypto

/// ECDSA P-256 verification (Support/P256*.swift), which `ck serve` needs for CloudKit's
/// server-to-server keys: NIST's SigVer and PKV vectors, signatures made by openssl, the string
/// CloudKit clients sign, and hostile bytes that must never trap.
final class P256Tests: XCTestCase {

    // MARK: - Arithmetic

    func testMontgomeryConstants() {
        for (modulus, negatedInverse) in [(P256Prime.modulus, P256Prime.negatedInverse), (P256Order.modulus, P256Order.negatedInverse)] {
            XCTAssertEqual(modulus.w0 &* negatedInverse, UInt64.max, "m·(-m⁻¹) ≡ -1 mod 2^64")
        }
        // R² mod m is right when entering and leaving the Montgomery form is the identity.
        for x in [UInt256(0), UInt256(1), UInt256(2), hex256("ffffffff00000001000000000000000000000000fffffffffffffffffffffffe")] {
            XCTAssertEqual(P256.FieldElement(reducing: x).value, x)
        }
        XCTAssertEqual(P256.Scalar(reducing: P256Order.modulus).value, .zero)
        XCTAssertEqual(P256.FieldElement(reducing: P256Prime.modulus).value, .zero)
        XCTAssertNil(P256.FieldElement(exactly: P256Prime.modulus))
        // (p-1)² = 1, (n-1)² = 1.
        let minusOne = P256.FieldElement.zero - .one
        XCTAssertEqual((minusOne * minusOne).value, UInt256(1))
        let minusOneN = P256.Scalar.zero - .one
        XCTAssertEqual((minusOneN * minusOneN).value, UInt256(1))
    }

    /// The three carry helpers against a plain reference, on the edges and at random.
    func testCarriesAndBorrows() {
        var rng = SplitMix(seed: 64)
        let edges: [UInt64] = [0, 1, 2, 1 << 63, (1 << 63) - 1, (1 << 63) + 1, .max - 1, .max]
        var cases: [(UInt64, UInt64, UInt64)] = []
        for a in edges { for b in edges { cases += [(a, b, 0), (a, b, 1)] } }
        for _ in 0..<1000 { cases.append((rng.next(), rng.next(), rng.next() & 1)) }
        for (a, b, c) in cases {
            let (s1, o1) = a.addingReportingOverflow(b), (s2, o2) = s1.addingReportingOverflow(c)
            let sum = (s2, UInt64(o1 || o2 ? 1 : 0))
            XCTAssertTrue(UInt256.addWithCarry(a, b, c) == sum, "\(a) + \(b) + \(c)")
            XCTAssertTrue(UInt256.addWithCarryBitwise(a, b, c) == sum, "\(a) + \(b) + \(c), bitwise")
            let (d1, u1) = a.subtractingReportingOverflow(b), (d2, u2) = d1.subtractingReportingOverflow(c)
            XCTAssertTrue(UInt256.subtractWithBorrow(a, b, c) == (d2, UInt64(u1 || u2 ? 1 : 0)), "\(a) - \(b) - \(c)")
        }
        let max = UInt256(w0: .max, w1: .max, w2: .max, w3: .max)
        XCTAssertTrue(max.addingReportingCarry(UInt256(1)) == (UInt256.zero, 1))
        XCTAssertTrue(UInt256.zero.subtractingReportingBorrow(UInt256(1)) == (max, 1))
        XCTAssertTrue(UInt256(0) < UInt256(1) && !(max < max) && UInt256(w0: 0, w1: 0, w2: 0, w3: 1) > UInt256(w0: .max, w1: .max, w2: .max, w3: 0))
    }

    func testProductsAndInversesAgreeWithEachOther() {
        var rng = SplitMix(seed: 256)
        for _ in 0..<200 {
            let a = P256.FieldElement(reducing: randomUInt256(&rng)), b = P256.FieldElement(reducing: randomUInt256(&rng))
            let c = P256.FieldElement(reducing: randomUInt256(&rng))
            XCTAssertEqual(a * (b + c), a * b + a * c)
            XCTAssertEqual((a - b) + b, a)
            if !a.isZero { XCTAssertEqual((a * a.inverse()).value, UInt256(1)) }
            let s = P256.Scalar(reducing: randomUInt256(&rng))
            if !s.isZero { XCTAssertEqual((s * s.inverse()).value, UInt256(1)) }
        }
        // A product near the top of the range: (2^256 - 1) mod p, squared, checked with Python.
        let big = P256.FieldElement(reducing: hex256(String(repeating: "f", count: 64)))
        XCTAssertEqual(big.value, hex256("00000000fffffffeffffffffffffffffffffffff000000000000000000000000"))
        XCTAssertEqual(big.squared().value, hex256("00000002fffffffffffffffffffffffefffffffdffffffff0000000000000002"))
    }

    /// k·G against values computed independently (Python, affine formulas), through both halves
    /// of `multiplyGenerator` (the generator's table and the other point's).
    func testScalarMultiplesOfTheGenerator() throws {
        let known: [(String, String, String)] = [
            ("2", "7cf27b188d034f7e8a52380304b51ac3c08969e277f21b35a60b48fc47669978", "07775510db8ed040293d9ac69f7430dbba7dade63ce982299e04b79d227873d1"),
            ("3", "5ecbe4d1a6330a44c8f7ef951d4bf165e6c6b721efada985fb41661bc6e7fd6c", "8734640c4998ff7e374b06ce1a64a2ecd82ab036384fb83d9a79b127a27d5032"),
            ("f", "f0454dc6971abae7adfb378999888265ae03af92de3a0ef163668c63e59b9d5f", "b5b93ee3592e2d1f4e6594e51f9643e62a3b21ce75b5fa3f47e59cde0d034f36"),
            ("10", "76a94d138a6b41858b821c629836315fcd28392eff6ca038a5eb4787e1277c6e", "a985fe61341f260e6cb0a1b5e11e87208599a0040fc78baa0e9ddd724b8c5110"),
            ("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632550",
             "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296", "b01cbd1c01e58065711814b583f061e9d431cca994cea1313449bf97c840ae0a"),
            ("c51e4753afdec1e6b6c6a5b992f43f8dd0c7a8933072708b6522468b2ffb06fd",
             "942c9f408ead9d82d34a1b9a6a827ebe3e2ddf782b448d23be1b6143988ccef4", "8c9eaf6c0d14d992fc63bad3e2496be2eee61cb5b97f65f428ca94a5d0ee19a1"),
        ]
        let g = P256JacobianPoint(P256.generator)
        for (k, x, y) in known {
            let expected = try P256PublicKey(x963: [4] + bytes(x) + bytes(y))
            for point in [P256JacobianPoint.multiplyGenerator(by: hex256(k), adding: .zero, times: g),
                          P256JacobianPoint.multiplyGenerator(by: .zero, adding: hex256(k), times: g)] {
                XCTAssertEqual(point.affine, expected.point, "\(k)·G")
            }
        }
        // (k)·G + (n-k)·G = n·G = infinity, reached by adding opposite points.
        let k = hex256("c51e4753afdec1e6b6c6a5b992f43f8dd0c7a8933072708b6522468b2ffb06fd")
        let nMinusK = P256Order.modulus.subtractingReportingBorrow(k).difference
        XCTAssertTrue(P256JacobianPoint.multiplyGenerator(by: k, adding: nMinusK, times: g).isInfinity)
        XCTAssertTrue(P256JacobianPoint.multiplyGenerator(by: P256Order.modulus, adding: .zero, times: g).isInfinity)
        XCTAssertTrue(P256JacobianPoint.multiplyGenerator(by: .zero, adding: .zero, times: g).isInfinity)
        // 3·G + 3·G with Q = G: the two window additions meet the same point (the doubling case).
        XCTAssertEqual(P256JacobianPoint.multiplyGenerator(by: UInt256(3), adding: UInt256(3), times: g).affine,
                       P256JacobianPoint.multiplyGenerator(by: UInt256(6), adding: .zero, times: g).affine)
    }

    // MARK: - NIST vectors

    /// FIPS 186-3 SigVer, [P-256,SHA-256]: every P verifies, every F does not — through DER and
    /// through the raw form.
    func testNISTSigVerVectors() throws {
        let vectors = try nistVectors("SigVer-P256-SHA256.rsp")
        XCTAssertEqual(vectors.count, 15)
        var passed = 0, failed = 0, accepted = 0, rejected = 0
        for (i, v) in vectors.enumerated() {
            let expected = v["Result"]!.hasPrefix("P")
            let digest = SHA256.digest(try bytes(v["Msg"]!))
            let r = try bytes(v["R"]!), s = try bytes(v["S"]!)
            let key = try? P256PublicKey(x963: [4] + bytes(v["Qx"]!) + bytes(v["Qy"]!))
            let viaDER = key?.isValidSignature(derSignature(r: r, s: s), digest: digest) ?? false
            let viaRaw = key.map { key in (try? P256Signature(raw: r + s)).map { key.isValidSignature($0, digest: digest) } ?? false } ?? false
            XCTAssertEqual(viaDER, expected, "vector \(i): \(v["Result"]!)")
            XCTAssertEqual(viaRaw, expected, "vector \(i), raw: \(v["Result"]!)")
            if viaDER == expected && viaRaw == expected { passed += 1 } else { failed += 1 }
            if viaDER { accepted += 1 } else { rejected += 1 }
        }
        print("NIST SigVer P-256/SHA-256: \(passed) of \(vectors.count) vectors as expected, \(failed) not (\(accepted) accepted, \(rejected) rejected)")
    }

    /// FIPS 186-3 PKV, [P-256]: valid keys load; a coordinate out of range or a point off the
    /// curve is refused.
    func testNISTPublicKeyValidationVectors() throws {
        let vectors = try nistVectors("PKV-P256.rsp")
        XCTAssertEqual(vectors.count, 12)
        var asExpected = 0
        for (i, v) in vectors.enumerated() {
            let expected = v["Result"]!.hasPrefix("P")
            // Coordinates longer than 32 bytes cannot be written in an X9.63 point: give them
            // their natural length, which the parser must refuse as well.
            let x = try padded(bytes(v["Qx"]!)), y = try padded(bytes(v["Qy"]!))
            let loaded = (try? P256PublicKey(x963: [4] + x + y)) != nil
            XCTAssertEqual(loaded, expected, "vector \(i): \(v["Result"]!)")
            if loaded == expected { asExpected += 1 }
        }
        print("NIST PKV P-256: \(asExpected) of \(vectors.count) keys as expected")
    }

    // MARK: - Keys

    func testKeyEncodingsAndTheirRefusals() throws {
        let g = P256.generator
        let gx = g.x.value.bigEndianBytes, gy = g.y.value.bigEndianBytes
        let key = try P256PublicKey(x963: [4] + gx + gy)
        XCTAssertEqual(key.x963, [4] + gx + gy)
        // Compressed: G's y is odd (…f5).
        XCTAssertEqual(try P256PublicKey(x963: [3] + gx), key)
        XCTAssertNotEqual(try P256PublicKey(x963: [2] + gx), key)
        XCTAssertEqual(try P256PublicKey(x963: [2] + gx).point.y, .zero - g.y)

        func refuses(_ bytes: [UInt8], _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try P256PublicKey(x963: bytes), line: line) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(error)", line: line)
            }
        }
        refuses([], "empty")
        refuses([0], "infinity")
        refuses([4] + gx + gy.dropLast(), "65 bytes")
        refuses([4] + gx + gy + [0], "65 bytes")
        refuses([6] + gx + gy, "65 bytes")  // hybrid form
        refuses([4] + gx + gx, "not a point on P-256")
        refuses([4] + P256Prime.modulus.bigEndianBytes + gy, "not below the field prime")
        refuses([4] + gx + [UInt8](repeating: 0xff, count: 32), "not below the field prime")
        refuses([4] + [UInt8](repeating: 0, count: 64), "not a point on P-256")
        // x = 1: 1 - 3 + b is not a square mod p, so there is no point to decompress (x = 0 has one).
        refuses([2] + UInt256(1).bigEndianBytes, "not a point on P-256")
        XCTAssertNoThrow(try P256PublicKey(x963: [2] + UInt256(0).bigEndianBytes))
    }

    func testPEMAndDERRefusalsSayWhatIsWrong() throws {
        let pem = samplePEM
        let spki = Data(base64Encoded: pem.split(separator: "\n").dropFirst().dropLast().joined())!
        let key = try P256PublicKey(pem: pem)
        XCTAssertEqual(try P256PublicKey(der: [UInt8](spki)), key)
        XCTAssertEqual(try P256PublicKey(pem: "junk before\r\n" + pem.replacingOccurrences(of: "\n", with: "\r\n") + "after"), key)
        XCTAssertEqual(try P256PublicKey(pem: "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + pem), key)
        XCTAssertEqual(try P256PublicKey(pem: spki.base64EncodedString()), key, "the base64 body alone")

        func refuses(_ text: String, _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try P256PublicKey(pem: text), line: line) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(error)", line: line)
            }
        }
        refuses("", "no '-----BEGIN PUBLIC KEY-----' line")
        refuses("hello", "no '-----BEGIN PUBLIC KEY-----' line")
        refuses(pem.replacingOccurrences(of: "-----END PUBLIC KEY-----", with: ""), "no '-----END PUBLIC KEY-----' line")
        refuses(pem.replacingOccurrences(of: "MFkw", with: "M*kw"), "not valid base64")
        refuses("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n", "this is a private key")
        refuses("-----BEGIN CERTIFICATE-----\nMHcCAQEE\n-----END CERTIFICATE-----\n", "no PUBLIC KEY block (found CERTIFICATE)")

        func refusesDER(_ der: [UInt8], _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try P256PublicKey(der: der), line: line) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(error)", line: line)
            }
        }
        let d = [UInt8](spki)
        let point = Array(d.suffix(65))
        XCTAssertEqual(subjectPublicKeyInfo(parameters: der(0x06, prime256v1), point: point), d, "the test's builder makes openssl's bytes")
        refusesDER(d + [0], "1 byte after the SubjectPublicKeyInfo")
        refusesDER(Array(d.dropLast()), "only 88 remain")
        refusesDER([0x30, 0x80] + d.dropFirst(2), "indefinite length")
        refusesDER([0x30, 0x81, 0x59] + d.dropFirst(2), "not minimal")
        refusesDER(subjectPublicKeyInfo(parameters: der(0x06, [0x2b, 0x81, 0x04, 0x00, 0x22]), point: point),
                   "the key's curve is secp384r1 (1.3.132.0.34), not P-256")
        refusesDER(subjectPublicKeyInfo(algorithm: [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01], parameters: der(0x05, []), point: point),
                   "its algorithm is rsaEncryption (1.2.840.113549.1.1.1)")
        refusesDER(subjectPublicKeyInfo(algorithm: [0x2b, 0x65, 0x70], parameters: [], point: Array(point.prefix(32))),
                   "its algorithm is Ed25519 (1.3.101.112)")
        refusesDER(subjectPublicKeyInfo(parameters: der(0x30, der(0x02, [1])), point: point), "explicit parameters")
        refusesDER(subjectPublicKeyInfo(parameters: [], point: point), "the key names no curve")
        refusesDER(subjectPublicKeyInfo(parameters: der(0x06, prime256v1) + der(0x05, []), point: point), "2 bytes after the curve name")
        refusesDER(subjectPublicKeyInfo(parameters: der(0x06, prime256v1), point: point, unusedBits: 1), "0 unused bits")
        refusesDER(subjectPublicKeyInfo(parameters: der(0x06, prime256v1), point: []), "the public key is empty")
        refusesDER(subjectPublicKeyInfo(parameters: der(0x06, prime256v1), point: point) + [0x05, 0x00], "2 bytes after the SubjectPublicKeyInfo")
        refusesDER(Array(d[0..<23]) + [0x04, 0x42] + d[25...], "expected BIT STRING")
    }

    func testSignatureDERIsStrict() throws {
        let r = [UInt8](repeating: 0x11, count: 32), s = [UInt8](repeating: 0x22, count: 32)
        let good = derSignature(r: r, s: s)
        XCTAssertEqual(try P256Signature(der: good).raw, r + s)
        let highR = [0x80] + [UInt8](repeating: 0, count: 31)
        XCTAssertEqual(try P256Signature(der: derSignature(r: highR, s: s)).raw, highR + s, "a leading zero before a high bit")
        XCTAssertEqual(try P256Signature(der: [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x7f]).raw,
                       [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [0x7f])

        func refuses(_ der: [UInt8], _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try P256Signature(der: der), line: line) { error in
                XCTAssertTrue("\(error)".contains(fragment), "\(error)", line: line)
            }
        }
        refuses([], "found the end of the data")
        refuses([0x30], "without a length")
        refuses([0x30, 0x00], "expected INTEGER, found the end")
        refuses(good + [0], "1 byte after the signature's SEQUENCE")
        refuses(Array(good.dropLast()), "remain")
        refuses([0x31] + good.dropFirst(), "expected SEQUENCE")
        refuses([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x02], "4294967295 bytes")
        refuses([0x30, 0x85, 1, 0, 0, 0, 0], "5-byte length")
        refuses([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00], "1 byte after the signature's SEQUENCE")
        refuses([0x30, 0x09, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01], "bytes after the integers")
        refuses([0x30, 0x05, 0x02, 0x00, 0x02, 0x01, 0x01], "INTEGER with no bytes")
        refuses([0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01], "negative")
        refuses([0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01], "leading zero that is not needed")
        refuses([0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x01], "r is not in 1…n-1")
        refuses(derSignature(r: r, s: P256Order.modulus.bigEndianBytes), "s is not in 1…n-1")
        refuses(derSignature(r: [UInt8](repeating: 0xff, count: 32), s: s), "r is not in 1…n-1")
        refuses(derSignature(r: [1] + r, s: s), "r is longer than 32 bytes")
        XCTAssertThrowsError(try P256Signature(raw: r + s + [0]))
        XCTAssertThrowsError(try P256Signature(raw: [UInt8](repeating: 0, count: 64)))
    }

    /// With the key G (private key 1), a digest e = n - r makes u1·G + u2·Q the point at
    /// infinity: the signature must be refused, not crash.
    func testASumAtInfinityIsRefused() throws {
        let key = try P256PublicKey(x963: [4] + P256.generator.x.value.bigEndianBytes + P256.generator.y.value.bigEndianBytes)
        let r = hex256("1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef")
        let e = P256Order.modulus.subtractingReportingBorrow(r).difference
        let signature = try P256Signature(raw: r.bigEndianBytes + UInt256(7).bigEndianBytes)
        XCTAssertFalse(key.isValidSignature(signature, digest: e.bigEndianBytes))
        // And the same key with a real signature (k = 5, d = 1) verifies: s = k⁻¹(e + r·d).
        let k = P256.Scalar(reducing: UInt256(5))
        let kG = P256JacobianPoint.multiplyGenerator(by: UInt256(5), adding: .zero, times: P256JacobianPoint(P256.generator)).affine!
        let r5 = P256.Scalar(reducing: kG.x.value)
        let digest = SHA256.digest(Array("five".utf8))
        let s5 = k.inverse() * (P256.Scalar(reducing: UInt256(bigEndian: digest)!) + r5)
        XCTAssertTrue(key.isValidSignature(try P256Signature(raw: r5.value.bigEndianBytes + s5.value.bigEndianBytes), digest: digest))
        XCTAssertFalse(key.isValidSignature(try P256Signature(raw: r5.value.bigEndianBytes + s5.value.bigEndianBytes), digest: SHA256.digest(Array("six".utf8))))
    }

    /// The rare case x(u1·G + u2·Q) ≥ n, where r = x - n (verification compares x with r and with
    /// r + n, without an inversion). No signer meets it by chance (odds about 2^-128), so the
    /// test makes one: a point R with x in [n, p), then the key Q that makes u1·G + u2·Q = R.
    func testAnXCoordinateAboveTheOrderVerifies() throws {
        var t = UInt64(1)
        var found: (x: P256.FieldElement, y: P256.FieldElement)?
        while found == nil {
            let x = P256.FieldElement(exactly: P256Order.modulus.addingReportingCarry(UInt256(t)).sum)!
            if let y = P256.squareRoot(P256.curveRightSide(x)) { found = (x, y) } else { t += 1 }
        }
        let bigR = P256AffinePoint(checking: found!.x, found!.y)!
        let r = P256.Scalar(reducing: UInt256(t))
        let s = P256.Scalar(reducing: hex256("5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"))
        let digest = SHA256.digest(Array("above the order".utf8))
        let u1 = P256.Scalar(reducing: UInt256(bigEndian: digest)!) * s.inverse()
        let u2 = r * s.inverse()
        // Q = u2⁻¹·(R - u1·G), so that u1·G + u2·Q = R.
        let rMinusU1G = P256JacobianPoint.multiplyGenerator(by: (P256.Scalar.zero - u1).value, adding: UInt256(1), times: P256JacobianPoint(bigR))
        let q = P256JacobianPoint.multiplyGenerator(by: .zero, adding: u2.inverse().value, times: rMinusU1G).affine!
        let key = try P256PublicKey(x963: [4] + q.x.value.bigEndianBytes + q.y.value.bigEndianBytes)
        let signature = try P256Signature(raw: r.value.bigEndianBytes + s.value.bigEndianBytes)
        XCTAssertTrue(key.isValidSignature(signature, digest: digest), "x = r + n with r = \(t)")
        XCTAssertFalse(key.isValidSignature(signature, digest: SHA256.digest(Array("another".utf8))))
        let rPlusOne = try P256Signature(raw: UInt256(t + 1).bigEndianBytes + s.value.bigEndianBytes)
        XCTAssertFalse(key.isValidSignature(rPlusOne, digest: digest))
        XCTAssertThrowsError(try P256Signature(raw: found!.x.value.bigEndianBytes + s.value.bigEndianBytes), "r = x itself is not below n")
    }

    // MARK: - openssl

    func testSignaturesMadeByOpenSSL() throws {
        let tool = try OpenSSL(self)
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "k.pem")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-out", "pub.pem")
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "other.pem")
        try tool.run("ec", "-in", "other.pem", "-pubout", "-out", "otherpub.pem")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-outform", "DER", "-out", "pub.der")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-conv_form", "compressed", "-out", "pubc.pem")
        let key = try P256PublicKey(pem: tool.text("pub.pem"))
        let other = try P256PublicKey(pem: tool.text("otherpub.pem"))
        XCTAssertEqual(try P256PublicKey(der: tool.bytes("pub.der")), key)
        XCTAssertEqual(try P256PublicKey(pem: tool.text("pubc.pem")), key, "the compressed point names the same key")
        XCTAssertNotEqual(other, key)
        XCTAssertThrowsError(try P256PublicKey(pem: tool.text("k.pem"))) { error in
            XCTAssertTrue("\(error)".contains("private key"), "\(error)")
        }

        var rng = SplitMix(seed: 29)
        let messages: [[UInt8]] = [[], Array("abc".utf8), Array("CloudKit".utf8), [0],
                                   (0..<1000).map { _ in UInt8.random(in: 0...255, using: &rng) },
                                   (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &rng) }]
        var cases = 0
        for (i, message) in messages.enumerated() {
            try tool.write("msg\(i)", message)
            try tool.run("dgst", "-sha256", "-sign", "k.pem", "-out", "sig\(i).der", "msg\(i)")
            let signature = try tool.bytes("sig\(i).der")
            let digest = SHA256.digest(message)
            XCTAssertTrue(key.isValidSignature(signature, for: message), "message \(i)")
            XCTAssertTrue(key.isValidSignature(signature, digest: digest), "message \(i), by digest")
            XCTAssertTrue(key.isValidSignature(try P256Signature(raw: P256Signature(der: signature).raw), digest: digest), "message \(i), raw r‖s")
            XCTAssertFalse(key.isValidSignature(signature, for: message + [0]), "another message")
            XCTAssertFalse(key.isValidSignature(signature, for: messages[(i + 1) % messages.count]), "another message")
            XCTAssertFalse(other.isValidSignature(signature, for: message), "another key")
            cases += 5
            // Bits flipped one at a time: every bit of the DER framing (bad DER, or a valid DER
            // of other integers), and the low and high bits of the first, middle and last bytes
            // of r and of s (a wrong signature). Every bit of r and s would be 500 verifications
            // a signature: minutes in a debug build.
            let rLength = Int(signature[3]), sLength = Int(signature[5 + rLength])
            let framing = [0, 1, 2, 3, 4 + rLength, 5 + rLength]
            var flips = framing.flatMap { byte in (0..<8).map { byte * 8 + $0 } }
            for (start, length) in [(4, rLength), (6 + rLength, sLength)] {
                for byte in [start, start + length / 2, start + length - 1] { flips += [byte * 8, byte * 8 + 7] }
            }
            for bit in flips {
                var flipped = signature
                flipped[bit / 8] ^= 1 << UInt8(bit % 8)
                XCTAssertFalse(key.isValidSignature(flipped, digest: digest), "message \(i), bit \(bit) flipped")
                cases += 1
            }
            for length in 0..<signature.count {
                XCTAssertFalse(key.isValidSignature(Array(signature[..<length]), digest: digest), "message \(i), truncated to \(length)")
                cases += 1
            }
        }
        print("openssl: \(messages.count) signatures verified, \(cases) cases checked (other message, other key, bits flipped, every truncation)")
    }

    /// The string CloudKit's server-to-server clients sign (cloudkit-js.md §3), signed by
    /// openssl, verified here from the headers' values.
    func testCloudKitRequestSignatureEndToEnd() throws {
        let tool = try OpenSSL(self)
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "k.pem")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-out", "pub.pem")
        let key = try P256PublicKey(pem: tool.text("pub.pem"))

        let date = "2026-11-25T13:05:25Z"
        let body = Array(#"{"zoneID":{"zoneName":"_defaultZone"},"query":{"recordType":"Items"}}"#.utf8)
        let path = "/database/1/iCloud.x/development/public/records/query?ckjsBuildVersion=2420ProjectDev22&ckjsVersion=2.6.4&clientId=6c4f54bd-4a0d-4a43-a5a4-6f3c5b1e0a53"
        let signed = date + ":" + Data(SHA256.digest(body)).base64EncodedString() + ":" + path
        try tool.write("request", Array(signed.utf8))
        try tool.run("dgst", "-sha256", "-sign", "k.pem", "-out", "request.sig", "request")
        let header = try tool.bytes("request.sig")
        let signatureHeader = Data(header).base64EncodedString()  // X-Apple-CloudKit-Request-SignatureV1
        XCTAssertTrue(signatureHeader.hasPrefix("ME"))

        let received = [UInt8](Data(base64Encoded: signatureHeader)!)
        func stringToSign(date: String, body: [UInt8], path: String) -> [UInt8] {
            Array((date + ":" + Data(SHA256.digest(body)).base64EncodedString() + ":" + path).utf8)
        }
        XCTAssertTrue(key.isValidSignature(received, for: stringToSign(date: date, body: body, path: path)))
        let bare = String(path[..<path.firstIndex(of: "?")!])
        XCTAssertFalse(key.isValidSignature(received, for: stringToSign(date: date, body: body, path: bare)), "the query string is signed")
        XCTAssertFalse(key.isValidSignature(received, for: stringToSign(date: "2026-11-25T13:05:26Z", body: body, path: path)), "the date is signed")
        XCTAssertFalse(key.isValidSignature(received, for: stringToSign(date: date, body: body + [0x20], path: path)), "the body is signed")
    }

    // MARK: - Hostile input

    /// Random bytes as keys (X9.63, DER, PEM) and as signatures, seeded; empty inputs; DER with
    /// huge lengths; well-formed signatures with random r and s. Every one refused, none traps.
    func testHostileInputIsRefusedWithoutATrap() throws {
        var rng = SplitMix(seed: 0xC0FFEE)
        let key = try P256PublicKey(pem: samplePEM)
        func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        let digest = SHA256.digest(Array("message".utf8))
        var refused = 0, fullVerifications = 0

        // Keys.
        for round in 0..<3000 {
            let length = [0, 1, 33, 65, 66, 91, Int.random(in: 0...200, using: &rng)][round % 7]
            var bytes = randomBytes(length)
            if length == 65 { bytes[0] = 4 } else if length == 33 { bytes[0] = 2 + UInt8(round & 1) }
            if round % 5 == 0, length > 2 { bytes[0] = 0x30; bytes[1] = UInt8(truncatingIfNeeded: length - 2) }
            // A random point passes only if it is on the curve: about half of compressed x do.
            let asPoint = try? P256PublicKey(x963: bytes)
            if length != 33 { XCTAssertNil(asPoint, "random \(length) bytes as a point") }
            XCTAssertNil(try? P256PublicKey(der: bytes))
            XCTAssertNil(try? P256PublicKey(pem: "-----BEGIN PUBLIC KEY-----\n\(Data(bytes).base64EncodedString())\n-----END PUBLIC KEY-----"))
            XCTAssertNil(try? P256PublicKey(pem: String(decoding: bytes, as: UTF8.self)))
            refused += 4
        }
        // Signatures: random bytes, random bytes under a SEQUENCE header, lengths near the limits.
        for round in 0..<3000 {
            var bytes = randomBytes([0, 1, 2, 8, 64, 70, 71, 72, Int.random(in: 0...300, using: &rng)][round % 9])
            if round % 3 == 0, bytes.count >= 4 {
                bytes[0] = 0x30; bytes[1] = UInt8(truncatingIfNeeded: bytes.count - 2); bytes[2] = 0x02
            }
            XCTAssertFalse(key.isValidSignature(bytes, digest: digest))
            XCTAssertFalse(key.isValidSignature(bytes, for: bytes))
            // Random 64 bytes are nearly always an r and an s in range: each is a whole
            // verification (tens of milliseconds in a debug build), so only the first few.
            if bytes.count == 64, fullVerifications < 25, let raw = try? P256Signature(raw: bytes) {
                XCTAssertFalse(key.isValidSignature(raw, digest: digest)); fullVerifications += 1
            }
            refused += 2
        }
        let huge: [[UInt8]] = [[0x30, 0x84, 0xff, 0xff, 0xff, 0xff], [0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02],
                               [0x30, 0x88] + [UInt8](repeating: 0xff, count: 8), [0x30, 0xff], [0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00],
                               [0x30, 0x06, 0x02, 0x84, 0xff, 0xff, 0xff, 0xff], [0x30, 0x04, 0x02, 0x81, 0x80, 0x01],
                               [0x30, 0x46, 0x02, 0x21] + [UInt8](repeating: 0xff, count: 66), [UInt8](repeating: 0x30, count: 10_000)]
        for bytes in huge {
            XCTAssertFalse(key.isValidSignature(bytes, digest: digest))
            XCTAssertNil(try? P256PublicKey(der: bytes))
            refused += 2
        }
        // Well-formed signatures with random r and s, verified all the way: refused.
        for _ in 0..<25 {
            let r = randomBytes(32), s = randomBytes(32)
            if let signature = try? P256Signature(raw: r + s) {
                XCTAssertFalse(key.isValidSignature(signature, digest: digest))
                XCTAssertFalse(key.isValidSignature(derSignature(r: r, s: s), digest: randomBytes(Int.random(in: 0...64, using: &rng))))
                fullVerifications += 2; refused += 2
            }
        }
        // A valid key's DER and a valid signature's DER, mutated (bytes changed, cut, inserted):
        // the parsers reach every check. Only parsing here; a mutated r or s that still parses
        // is one more wrong signature, which the loops above already verify.
        let spki = [UInt8](Data(base64Encoded: samplePEM.split(separator: "\n").dropFirst().dropLast().joined())!)
        let signature = derSignature(r: randomBytes(32), s: [0x7f] + randomBytes(31))
        var mutatedKeys = 0, parsedSignatures = 0
        for round in 0..<4000 {
            var bytes = round & 1 == 0 ? spki : signature
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                case 2: bytes.removeSubrange(at...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                }
                if bytes.isEmpty { break }
            }
            if round & 1 == 0 {
                if let mutated = try? P256PublicKey(der: bytes) {
                    // Only a change that leaves the DER and the point intact can parse: the
                    // same key (a change undone) or, very rarely, another point on the curve.
                    XCTAssertTrue(P256.isOnCurve(x: mutated.point.x, y: mutated.point.y))
                } else { mutatedKeys += 1 }
            } else if (try? P256Signature(der: bytes)) != nil {
                parsedSignatures += 1
            }
            refused += 1
        }
        // Empty and degenerate inputs.
        XCTAssertFalse(key.isValidSignature([], digest: digest))
        XCTAssertFalse(key.isValidSignature([], digest: []))
        XCTAssertFalse(key.isValidSignature([], for: []))
        XCTAssertThrowsError(try P256PublicKey(x963: []))
        XCTAssertThrowsError(try P256PublicKey(der: []))
        XCTAssertThrowsError(try P256PublicKey(pem: ""))
        XCTAssertThrowsError(try P256Signature(der: []))
        XCTAssertThrowsError(try P256Signature(raw: []))
        print("hostile input: \(refused) inputs, \(fullVerifications) of them refused after a whole verification; of 2000 mutated keys \(mutatedKeys) refused, of 2000 mutated signatures \(parsedSignatures) still well-formed DER; no trap")
    }

    // MARK: - Timing

    func testTimeOfOneVerification() throws {
        let v = try nistVectors("SigVer-P256-SHA256.rsp").first { $0["Result"]!.hasPrefix("P") }!
        let key = try P256PublicKey(x963: [4] + bytes(v["Qx"]!) + bytes(v["Qy"]!))
        let digest = SHA256.digest(try bytes(v["Msg"]!))
        let signature = derSignature(r: try bytes(v["R"]!), s: try bytes(v["S"]!))
        XCTAssertTrue(key.isValidSignature(signature, digest: digest))
        let rounds = 50
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<rounds { XCTAssertTrue(key.isValidSignature(signature, digest: digest)) }
        let each = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds) / 1000
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        print("P-256 verification: \(String(format: "%.0f", each)) µs each (\(build) build, mean of \(rounds))")
    }

    // MARK: - Helpers

    /// A public key made by `openssl ec -pubout` (its private key thrown away).
    let samplePEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXIVirZTtmSiy0E/liRxxVmgud6b4
        pOIS4i0NipDV0CZAVsNQMeZe594Xdlq4K4yCFngYzQsUergSaPBsdlPH3g==
        -----END PUBLIC KEY-----

        """

    func randomUInt256(_ rng: inout SplitMix) -> UInt256 {
        UInt256(w0: rng.next(), w1: rng.next(), w2: rng.next(), w3: rng.next())
    }

    struct BadHex: Error {}

    func bytes(_ hex: String) throws -> [UInt8] {
        var digits = Array(hex.utf8)
        if digits.count % 2 == 1 { digits.insert(0x30, at: 0) }  // NIST drops leading zeros
        func value(_ c: UInt8) throws -> UInt8 {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: throw BadHex()
            }
        }
        return try stride(from: 0, to: digits.count, by: 2).map { try value(digits[$0]) << 4 | value(digits[$0 + 1]) }
    }

    func hex256(_ hex: String) -> UInt256 {
        UInt256(bigEndian: try! bytes(hex))!
    }

    /// Left-padded to 32 bytes (NIST drops leading zeros); longer ones are left as they are.
    func padded(_ b: [UInt8]) -> [UInt8] {
        b.count >= 32 ? b : [UInt8](repeating: 0, count: 32 - b.count) + b
    }

    /// A DER element: tag, length (short or long form), contents.
    func der(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        let n = contents.count
        let length: [UInt8] = n < 0x80 ? [UInt8(n)] : n < 0x100 ? [0x81, UInt8(n)] : [0x82, UInt8(n >> 8), UInt8(n & 0xff)]
        return [tag] + length + contents
    }

    let idECPublicKey: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]
    let prime256v1: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]

    /// SEQUENCE { SEQUENCE { OID algorithm, parameters }, BIT STRING { unused bits, point } }.
    func subjectPublicKeyInfo(algorithm: [UInt8]? = nil, parameters: [UInt8], point: [UInt8], unusedBits: UInt8 = 0) -> [UInt8] {
        der(0x30, der(0x30, der(0x06, algorithm ?? idECPublicKey) + parameters) + der(0x03, [unusedBits] + point))
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` from big-endian magnitudes.
    func derSignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ magnitude: [UInt8]) -> [UInt8] {
            var m = Array(magnitude.drop { $0 == 0 })
            if m.isEmpty { m = [0] }
            if m[0] & 0x80 != 0 { m.insert(0, at: 0) }
            return [0x02, UInt8(m.count)] + m
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }

    /// The cases of a NIST .rsp file: its `Name = value` lines, one dictionary per blank-line
    /// separated group that has a Result.
    func nistVectors(_ name: String) throws -> [[String: String]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/nist/\(name)")
        let text = try String(contentsOf: url, encoding: .utf8)
        var vectors: [[String: String]] = [], current: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty {
                if current["Result"] != nil { vectors.append(current) }
                current = [:]
            } else if !trimmed.hasPrefix("#"), !trimmed.hasPrefix("["), let eq = trimmed.firstIndex(of: "=") {
                current[trimmed[..<eq].trimmingCharacters(in: .whitespaces)] = trimmed[trimmed.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            }
        }
        if current["Result"] != nil { vectors.append(current) }
        return vectors
    }
}
