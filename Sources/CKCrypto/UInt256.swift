/// A 256-bit unsigned integer: four 64-bit limbs, least significant first, on the stack.
/// It carries the numbers of P-256 (coordinates, scalars, r and s); `MontgomeryModulus` does the
/// modular arithmetic on top of it. Every operation is defined for every value: nothing here
/// traps, whatever bytes a client sends.
struct UInt256: Comparable, Sendable {
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    static let zero = UInt256(w0: 0, w1: 0, w2: 0, w3: 0)

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        self.w0 = w0; self.w1 = w1; self.w2 = w2; self.w3 = w3
    }

    init(_ small: UInt64) { self.init(w0: small, w1: 0, w2: 0, w3: 0) }

    /// The number whose big-endian bytes these are; nil for more than 32 bytes. Fewer bytes are
    /// read as if padded with leading zeros.
    init?<C: Collection>(bigEndian bytes: C) where C.Element == UInt8 {
        guard bytes.count <= 32 else { return nil }
        var limbs: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var shift = 8 * (bytes.count - 1)
        for byte in bytes {
            let v = UInt64(byte) << UInt64(shift & 63)
            switch shift >> 6 {
            case 0: limbs.0 |= v
            case 1: limbs.1 |= v
            case 2: limbs.2 |= v
            default: limbs.3 |= v
            }
            shift -= 8
        }
        self.init(w0: limbs.0, w1: limbs.1, w2: limbs.2, w3: limbs.3)
    }

    /// Exactly 32 big-endian bytes.
    var bigEndianBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for limb in [w3, w2, w1, w0] {
            for k in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: limb >> UInt64(k))) }
        }
        return out
    }

    var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }

    /// Bits `4i ..< 4i+4` (i in 0..<64) as a number 0...15: the digits of a fixed 4-bit window.
    func nibble(_ i: Int) -> Int {
        let limb: UInt64
        switch i >> 4 {
        case 0: limb = w0
        case 1: limb = w1
        case 2: limb = w2
        default: limb = w3
        }
        return Int(truncatingIfNeeded: (limb >> UInt64((i & 15) * 4)) & 15)
    }

    /// Bit i (0 least significant, i in 0..<256).
    func bit(_ i: Int) -> Bool {
        nibble(i >> 2) >> (i & 3) & 1 == 1
    }

    /// self + other mod 2^256, and the carry out (0 or 1).
    @inline(__always)
    func addingReportingCarry(_ o: UInt256) -> (sum: UInt256, carry: UInt64) {
        let (s0, c0) = UInt256.addWithCarryBitwise(w0, o.w0, 0)
        let (s1, c1) = UInt256.addWithCarryBitwise(w1, o.w1, c0)
        let (s2, c2) = UInt256.addWithCarryBitwise(w2, o.w2, c1)
        let (s3, c3) = UInt256.addWithCarryBitwise(w3, o.w3, c2)
        return (UInt256(w0: s0, w1: s1, w2: s2, w3: s3), c3)
    }

    /// self - other mod 2^256, and the borrow out (1 when self < other, else 0).
    @inline(__always)
    func subtractingReportingBorrow(_ o: UInt256) -> (difference: UInt256, borrow: UInt64) {
        let (d0, b0) = UInt256.subtractWithBorrow(w0, o.w0, 0)
        let (d1, b1) = UInt256.subtractWithBorrow(w1, o.w1, b0)
        let (d2, b2) = UInt256.subtractWithBorrow(w2, o.w2, b1)
        let (d3, b3) = UInt256.subtractWithBorrow(w3, o.w3, b2)
        return (UInt256(w0: d0, w1: d1, w2: d2, w3: d3), b3)
    }

    static func < (a: UInt256, b: UInt256) -> Bool {
        a.subtractingReportingBorrow(b).borrow != 0
    }

    /// a where mask is all ones, b where it is zero: a choice without a branch.
    @inline(__always)
    static func select(_ mask: UInt64, _ a: UInt256, _ b: UInt256) -> UInt256 {
        UInt256(w0: b.w0 ^ ((a.w0 ^ b.w0) & mask), w1: b.w1 ^ ((a.w1 ^ b.w1) & mask),
                w2: b.w2 ^ ((a.w2 ^ b.w2) & mask), w3: b.w3 ^ ((a.w3 ^ b.w3) & mask))
    }

    // Carries are UInt64s (0 or 1), not Bools: `||` on Bools is a branch, and the compiler then
    // cannot turn these chains into add-with-carry instructions.

    /// a + b + carry, and the carry out.
    @inline(__always)
    static func addWithCarry(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let (s, c1) = a.addingReportingOverflow(b)
        let (t, c2) = s.addingReportingOverflow(carry)
        return (t, (c1 ? 1 : 0) | (c2 ? 1 : 0))
    }

    /// addWithCarry computed from the bits, for chains of additions alone, which compile
    /// without branches this way: the carry out is bit 63 of (a ∧ b) ∨ ((a ∨ b) ∧ ¬s) (Hacker's
    /// Delight 2-13). Inside the multiplication the overflow flags are better: there they become
    /// add-with-carry instructions.
    @inline(__always)
    static func addWithCarryBitwise(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let s = a &+ b &+ carry
        return (s, ((a & b) | ((a | b) & ~s)) >> 63)
    }

    /// a - b - borrow, and the borrow out.
    @inline(__always)
    static func subtractWithBorrow(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
        // The borrow out is bit 63 of (¬a ∧ b) ∨ (¬(a ⊕ b) ∧ d) (Hacker's Delight 2-13): the
        // form compiles without branches, where two overflow flags did not.
        let d = a &- b &- borrow
        return (d, ((~a & b) | (~(a ^ b) & d)) >> 63)
    }
}
