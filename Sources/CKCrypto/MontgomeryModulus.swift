/// An odd 256-bit modulus m > 2^255 with the constants of Montgomery multiplication (R = 2^256).
/// P-256's prime and its group order are the two (`P256Prime`, `P256Order`): each is an enum whose
/// constants are literals, so the generic code below is specialized to them and inlined.
protocol MontgomeryModulus {
    /// m: odd, and above 2^255 (so any 256-bit number is below 2m: one subtraction reduces it).
    static var modulus: UInt256 { get }
    /// -m⁻¹ mod 2^64.
    static var negatedInverse: UInt64 { get }
    /// R² mod m, to enter the Montgomery form.
    static var rSquared: UInt256 { get }
    /// a·b·R⁻¹ mod m (below m) for a, b below m, or for any a when b is below m. The extension
    /// below has the general method; a modulus of a special shape may do it faster.
    static func montgomeryProduct(_ a: UInt256, _ b: UInt256) -> UInt256
}

/// A number modulo `M.modulus`, held in Montgomery form (a·R mod m, always fully reduced, below
/// m). The types keep the two moduli of ECDSA apart: a coordinate mod p cannot be multiplied by
/// a scalar mod n by mistake.
///
/// What signing (`P256PrivateKey`) relies on: the product, sum and difference and
/// `init(reducing:)` have no branch on the values (the final subtractions pick by mask), and their
/// release-build machine code on x86-64 has no conditional jump. `power` (so `inverse`) follows
/// the bits of its exponent, which is public wherever it is used (p-2, n-2, (p+1)/4), not those
/// of its base. `init(exactly:)`, `isZero` and `==` branch on the values: fine on public numbers
/// only.
struct Residue<M: MontgomeryModulus>: Equatable, Sendable {
    /// a·R mod m.
    var montgomery: UInt256

    init(montgomery: UInt256) { self.montgomery = montgomery }

    static var zero: Residue { Residue(montgomery: .zero) }
    static var one: Residue { Residue(reducing: UInt256(1)) }

    /// x mod m, for any 256-bit x.
    init(reducing x: UInt256) {
        let reduced = M.subtractModulusIfAbove(x, carry: 0)
        montgomery = M.montgomeryProduct(reduced, M.rSquared)
    }

    /// x if x < m, nil otherwise (an encoded coordinate or scalar out of range is malformed).
    init?(exactly x: UInt256) {
        guard x < M.modulus else { return nil }
        montgomery = M.montgomeryProduct(x, M.rSquared)
    }

    /// The number itself, in 0..<m.
    var value: UInt256 { M.montgomeryProduct(montgomery, UInt256(1)) }

    var isZero: Bool { montgomery.isZero }

    @inline(__always)
    static func + (a: Residue, b: Residue) -> Residue {
        let (s, carry) = a.montgomery.addingReportingCarry(b.montgomery)
        return Residue(montgomery: M.subtractModulusIfAbove(s, carry: carry))
    }

    @inline(__always)
    static func - (a: Residue, b: Residue) -> Residue {
        let (d, borrow) = a.montgomery.subtractingReportingBorrow(b.montgomery)
        return Residue(montgomery: d.addingReportingCarry(UInt256.select(0 &- borrow, M.modulus, .zero)).sum)
    }

    static func * (a: Residue, b: Residue) -> Residue {
        Residue(montgomery: M.montgomeryProduct(a.montgomery, b.montgomery))
    }

    func squared() -> Residue { self * self }

    /// self^e by square-and-multiply over the bits of e, most significant first.
    func power(_ e: UInt256) -> Residue {
        var result = Residue.one
        for i in stride(from: 255, through: 0, by: -1) {
            result = result.squared()
            if e.bit(i) { result = result * self }
        }
        return result
    }

    /// self⁻¹ (Fermat: self^(m-2), m being prime); zero for zero.
    func inverse() -> Residue {
        power(M.modulus.subtractingReportingBorrow(UInt256(2)).difference)
    }
}

extension MontgomeryModulus {
    /// x - m if carry·2^256 + x ≥ m, else x: brings a sum below 2m back below m.
    @inline(__always)
    static func subtractModulusIfAbove(_ x: UInt256, carry: UInt64) -> UInt256 {
        let (d, borrow) = x.subtractingReportingBorrow(modulus)
        return UInt256.select(0 &- (carry | (borrow ^ 1)), d, x)
    }

    /// a·b·R⁻¹ mod m for a, b < 2^256 with a·b < m·R (true whenever either is below m): CIOS
    /// (coarsely integrated operand scanning), one limb of b per round, each round adding a·bᵢ
    /// and then a multiple of m that clears the lowest limb. The running total stays below 2m,
    /// five limbs with the top one 0 or 1.
    static func montgomeryProduct(_ a: UInt256, _ b: UInt256) -> UInt256 {
        let m = modulus
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0, t4: UInt64 = 0
        @inline(__always) func round(_ bi: UInt64) {
            var c: UInt64
            (c, t0) = multiplyAdd(a.w0, bi, t0, 0)
            (c, t1) = multiplyAdd(a.w1, bi, t1, c)
            (c, t2) = multiplyAdd(a.w2, bi, t2, c)
            (c, t3) = multiplyAdd(a.w3, bi, t3, c)
            let (s4, t5) = UInt256.addWithCarry(t4, c, 0)
            let q = t0 &* negatedInverse
            (c, _) = multiplyAdd(q, m.w0, t0, 0)  // the low limb becomes zero by the choice of q
            (c, t0) = multiplyAdd(q, m.w1, t1, c)
            (c, t1) = multiplyAdd(q, m.w2, t2, c)
            (c, t2) = multiplyAdd(q, m.w3, t3, c)
            let (s3, o3) = UInt256.addWithCarry(s4, c, 0)
            t3 = s3
            t4 = t5 &+ o3
        }
        round(b.w0); round(b.w1); round(b.w2); round(b.w3)
        return subtractModulusIfAbove(UInt256(w0: t0, w1: t1, w2: t2, w3: t3), carry: t4)
    }

    /// x·y + s + c as two limbs (high, low). It cannot overflow: (2^64-1)² + 2(2^64-1) = 2^128 - 1,
    /// so the wrapping additions below are exact.
    @inline(__always)
    static func multiplyAdd(_ x: UInt64, _ y: UInt64, _ s: UInt64, _ c: UInt64) -> (UInt64, UInt64) {
        let (hi, lo) = x.multipliedFullWidth(by: y)
        let (lo1, o1) = UInt256.addWithCarry(lo, s, 0)
        let (lo2, o2) = UInt256.addWithCarry(lo1, c, 0)
        return (hi &+ o1 &+ o2, lo2)
    }
}
