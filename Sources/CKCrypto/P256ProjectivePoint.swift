/// A point of P-256 in homogeneous projective coordinates, for multiplying by a secret scalar:
/// (X : Y : Z) is the affine (X/Z, Y/Z), and (0 : 1 : 0) is the point at infinity.
///
/// The formulas are the complete ones of Renes, Costello and Batina, "Complete addition formulas
/// for prime order elliptic curves" (EUROCRYPT 2016, eprint 2015/1060), algorithms 4 and 6 for
/// a = -3. Complete: one sequence of field operations gives the right sum for every pair of
/// points, the point at infinity and P + P included, so no branch looks at the operands. With
/// the field's products, sums and differences branch-free (`Residue`), a sum or a double takes
/// the same steps whatever the points are.
struct P256ProjectivePoint: Sendable {
    var x: P256.FieldElement
    var y: P256.FieldElement
    var z: P256.FieldElement

    static var infinity: P256ProjectivePoint { P256ProjectivePoint(x: .zero, y: .one, z: .zero) }

    init(x: P256.FieldElement, y: P256.FieldElement, z: P256.FieldElement) {
        self.x = x; self.y = y; self.z = z
    }

    init(_ p: P256AffinePoint) { self.init(x: p.x, y: p.y, z: .one) }

    /// The affine point, or nil at infinity: one inversion of Z by Fermat (a fixed exponent,
    /// p - 2, so the same squarings and products for every Z).
    var affine: P256AffinePoint? {
        guard !z.isZero else { return nil }
        let zInverse = z.inverse()
        return P256AffinePoint(x: x * zInverse, y: y * zInverse)
    }

    /// self + q (algorithm 4: 12M + 2m_b + 29a), for every pair of points.
    func adding(_ q: P256ProjectivePoint) -> P256ProjectivePoint {
        let b = P256.b
        var t0 = x * q.x
        var t1 = y * q.y
        var t2 = z * q.z
        var t3 = x + y
        var t4 = q.x + q.y
        t3 = t3 * t4
        t4 = t0 + t1
        t3 = t3 - t4
        t4 = y + z
        var x3 = q.y + q.z
        t4 = t4 * x3
        x3 = t1 + t2
        t4 = t4 - x3
        x3 = x + z
        var y3 = q.x + q.z
        x3 = x3 * y3
        y3 = t0 + t2
        y3 = x3 - y3
        var z3 = b * t2
        x3 = y3 - z3
        z3 = x3 + x3
        x3 = x3 + z3
        z3 = t1 - x3
        x3 = t1 + x3
        y3 = b * y3
        t1 = t2 + t2
        t2 = t1 + t2
        y3 = y3 - t2
        y3 = y3 - t0
        t1 = y3 + y3
        y3 = t1 + y3
        t1 = t0 + t0
        t0 = t1 + t0
        t0 = t0 - t2
        t1 = t4 * y3
        t2 = t0 * y3
        y3 = x3 * z3
        y3 = y3 + t2
        x3 = t3 * x3
        x3 = x3 - t1
        z3 = t4 * z3
        t1 = t3 * t0
        z3 = z3 + t1
        return P256ProjectivePoint(x: x3, y: y3, z: z3)
    }

    /// 2·self (algorithm 6: 8M + 3S + 2m_b + 21a), for every point.
    func doubled() -> P256ProjectivePoint {
        let b = P256.b
        var t0 = x.squared()
        let t1 = y.squared()
        var t2 = z.squared()
        var t3 = x * y
        t3 = t3 + t3
        var z3 = x * z
        z3 = z3 + z3
        var y3 = b * t2
        y3 = y3 - z3
        var x3 = y3 + y3
        y3 = x3 + y3
        x3 = t1 - y3
        y3 = t1 + y3
        y3 = x3 * y3
        x3 = x3 * t3
        t3 = t2 + t2
        t2 = t2 + t3
        z3 = b * z3
        z3 = z3 - t2
        z3 = z3 - t0
        t3 = z3 + z3
        z3 = z3 + t3
        t3 = t0 + t0
        t0 = t3 + t0
        t0 = t0 - t2
        t0 = t0 * z3
        y3 = y3 + t0
        t0 = y * z
        t0 = t0 + t0
        z3 = t0 * z3
        x3 = x3 - z3
        z3 = t0 * t1
        z3 = z3 + z3
        z3 = z3 + z3
        return P256ProjectivePoint(x: x3, y: y3, z: z3)
    }

    /// a where mask is all ones, b where it is zero.
    @inline(__always)
    static func select(_ mask: UInt64, _ a: P256ProjectivePoint, _ b: P256ProjectivePoint) -> P256ProjectivePoint {
        P256ProjectivePoint(x: P256.FieldElement(montgomery: UInt256.select(mask, a.x.montgomery, b.x.montgomery)),
                            y: P256.FieldElement(montgomery: UInt256.select(mask, a.y.montgomery, b.y.montgomery)),
                            z: P256.FieldElement(montgomery: UInt256.select(mask, a.z.montgomery, b.z.montgomery)))
    }

    /// 0·G, 1·G, …, 15·G: the table of a 4-bit window over the base point. Public values, made once.
    static let generatorTable: [P256ProjectivePoint] = {
        var table = [P256ProjectivePoint.infinity, P256ProjectivePoint(P256.generator)]
        for k in 2..<16 { table.append(table[k - 1].adding(table[1])) }
        return table
    }()

    /// table[digit], read without an index or a branch that depends on the digit: every entry
    /// is read, and the one wanted kept by a mask.
    static func lookUp(_ table: [P256ProjectivePoint], _ digit: Int) -> P256ProjectivePoint {
        var chosen = P256ProjectivePoint.infinity
        for (j, entry) in table.enumerated() {
            // All ones when digit == j: (d | -d) has its top bit set exactly when d ≠ 0.
            let difference = UInt64(truncatingIfNeeded: digit ^ j)
            let mask = ((difference | (0 &- difference)) >> 63) &- 1
            chosen = select(mask, entry, chosen)
        }
        return chosen
    }

    /// k·G for a secret k, in constant time as far as this code can make it: a fixed 4-bit
    /// window over all 64 digits of k, most significant first — 256 doublings and 64 additions
    /// whatever k is (a zero digit adds the point at infinity), each digit's multiple read by
    /// `lookUp`.
    static func multiplyGenerator(secret k: UInt256) -> P256ProjectivePoint {
        let table = generatorTable
        var acc = P256ProjectivePoint.infinity
        for i in stride(from: 63, through: 0, by: -1) {
            acc = acc.doubled().doubled().doubled().doubled()
            acc = acc.adding(lookUp(table, k.nibble(i)))
        }
        return acc
    }
}
