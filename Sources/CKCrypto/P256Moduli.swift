/// p = 2^256 - 2^224 + 2^192 + 2^96 - 1, the field of P-256's coordinates.
///
/// Its shape makes Montgomery reduction cheap: p ≡ -1 (mod 2^64), so the multiple of p that
/// clears the low limb t₀ is t₀·p itself, and t₀·p = t₀·(2^256 - 2^224 + 2^192 + 2^96) - t₀. So
/// (t + t₀·p) / 2^64 = (t - t₀)/2^64 + t₀·2^32 + t₀·(2^64 - 2^32 + 1)·2^128: a shift, a shifted
/// copy of t₀ and one 64×64 multiplication, instead of four.
enum P256Prime: MontgomeryModulus {
    static var modulus: UInt256 {
        UInt256(w0: 0xffff_ffff_ffff_ffff, w1: 0x0000_0000_ffff_ffff, w2: 0x0000_0000_0000_0000, w3: 0xffff_ffff_0000_0001)
    }
    static var negatedInverse: UInt64 { 1 }
    static var rSquared: UInt256 {
        UInt256(w0: 0x0000_0000_0000_0003, w1: 0xffff_fffb_ffff_ffff, w2: 0xffff_ffff_ffff_fffe, w3: 0x0000_0004_ffff_fffd)
    }

    /// The CIOS product of `MontgomeryModulus` with that reduction step; the same value.
    @inline(__always)
    static func montgomeryProduct(_ a: UInt256, _ b: UInt256) -> UInt256 {
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0, t4: UInt64 = 0
        @inline(__always) func round(_ bi: UInt64) {
            // t += a·bᵢ (six limbs, the top one 0 or 1).
            var c: UInt64
            (c, t0) = multiplyAdd(a.w0, bi, t0, 0)
            (c, t1) = multiplyAdd(a.w1, bi, t1, c)
            (c, t2) = multiplyAdd(a.w2, bi, t2, c)
            (c, t3) = multiplyAdd(a.w3, bi, t3, c)
            let (s4, o4) = UInt256.addWithCarry(t4, c, 0)
            // t = (t + q·p) / 2^64 with q = t₀.
            let q = t0
            let (hi, lo) = q.multipliedFullWidth(by: 0xffff_ffff_0000_0001)
            var carry: UInt64
            (t0, carry) = UInt256.addWithCarry(t1, q << 32, 0)
            (t1, carry) = UInt256.addWithCarry(t2, q >> 32, carry)
            (t2, carry) = UInt256.addWithCarry(t3, lo, carry)
            (t3, carry) = UInt256.addWithCarry(s4, hi, carry)
            t4 = o4 &+ carry
        }
        round(b.w0); round(b.w1); round(b.w2); round(b.w3)
        return subtractModulusIfAbove(UInt256(w0: t0, w1: t1, w2: t2, w3: t3), carry: t4)
    }
}

/// n, the order of P-256's base point: the modulus of ECDSA's scalars (r, s, the digest). It has
/// no convenient shape; it uses the general product.
enum P256Order: MontgomeryModulus {
    static var modulus: UInt256 {
        UInt256(w0: 0xf3b9_cac2_fc63_2551, w1: 0xbce6_faad_a717_9e84, w2: 0xffff_ffff_ffff_ffff, w3: 0xffff_ffff_0000_0000)
    }
    static var negatedInverse: UInt64 { 0xccd1_c8aa_ee00_bc4f }
    static var rSquared: UInt256 {
        UInt256(w0: 0x8324_4c95_be79_eea2, w1: 0x4699_799c_49bd_6fa6, w2: 0x2845_b239_2b6b_ec59, w3: 0x66e1_2d94_f3d9_5620)
    }
}
