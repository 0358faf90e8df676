/// The curve P-256 (FIPS 186-4 D.1.2.3; secp256r1, prime256v1): y² = x³ - 3x + b over the field of
/// the prime p, with a base point G of prime order n (cofactor 1). Its constants and the two
/// moduli, for ECDSA (`P256PublicKey` verifies, `P256PrivateKey` signs).
enum P256 {
    typealias FieldElement = Residue<P256Prime>
    typealias Scalar = Residue<P256Order>

    /// b of the curve equation.
    static let b = FieldElement(reducing: UInt256(
        w0: 0x3bce_3c3e_27d2_604b, w1: 0x651d_06b0_cc53_b0f6, w2: 0xb3eb_bd55_7698_86bc, w3: 0x5ac6_35d8_aa3a_93e7))

    /// The base point G.
    static let generator = P256AffinePoint(
        x: FieldElement(reducing: UInt256(
            w0: 0xf4a1_3945_d898_c296, w1: 0x7703_7d81_2deb_33a0, w2: 0xf8bc_e6e5_63a4_40f2, w3: 0x6b17_d1f2_e12c_4247)),
        y: FieldElement(reducing: UInt256(
            w0: 0xcbb6_4068_37bf_51f5, w1: 0x2bce_3357_6b31_5ece, w2: 0x8ee7_eb4a_7c0f_9e16, w3: 0x4fe3_42e2_fe1a_7f9b)))

    /// Whether (x, y) satisfies y² = x³ - 3x + b.
    static func isOnCurve(x: FieldElement, y: FieldElement) -> Bool {
        y.squared() == curveRightSide(x)
    }

    /// x³ - 3x + b.
    static func curveRightSide(_ x: FieldElement) -> FieldElement {
        let three = FieldElement(reducing: UInt256(3))
        return x.squared() * x - three * x + b
    }

    /// A square root of a, or nil when a is not a square. p ≡ 3 (mod 4), so it is a^((p+1)/4).
    static func squareRoot(_ a: FieldElement) -> FieldElement? {
        let root = a.power(UInt256(w0: 0, w1: 0x0000_0000_4000_0000, w2: 0x4000_0000_0000_0000, w3: 0x3fff_ffff_c000_0000))
        return root.squared() == a ? root : nil
    }
}
