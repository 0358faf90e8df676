/// A point of P-256 in affine coordinates, never the point at infinity. Made only from
/// coordinates checked to be on the curve (`init?(checking:_:)`) or by the arithmetic below.
struct P256AffinePoint: Equatable, Sendable {
    let x: P256.FieldElement
    let y: P256.FieldElement

    /// nil unless (x, y) is on the curve.
    init?(checking x: P256.FieldElement, _ y: P256.FieldElement) {
        guard P256.isOnCurve(x: x, y: y) else { return nil }
        self.x = x; self.y = y
    }

    /// For the curve's own constants.
    init(x: P256.FieldElement, y: P256.FieldElement) { self.x = x; self.y = y }
}

/// A point of P-256 in Jacobian coordinates: (X, Y, Z) is the affine (X/Z², Y/Z³), and Z = 0 is
/// the point at infinity. The formulas are those of the Explicit-Formulas Database
/// (hyperelliptic.org/EFD) for a = -3: "dbl-2001-b", "add-2007-bl" and "madd-2007-bl", with the
/// exceptional cases of addition (an operand at infinity, P + P, P + (-P)) handled by branches.
///
/// Not constant-time: the branches and the window digits of `multiplyGenerator` depend on the values.
/// That is fine for verification, where the key, the message and the signature are public;
/// this code must not be used with a secret scalar.
struct P256JacobianPoint: Sendable {
    var x: P256.FieldElement
    var y: P256.FieldElement
    var z: P256.FieldElement

    static var infinity: P256JacobianPoint { P256JacobianPoint(x: .one, y: .one, z: .zero) }

    init(x: P256.FieldElement, y: P256.FieldElement, z: P256.FieldElement) {
        self.x = x; self.y = y; self.z = z
    }

    init(_ p: P256AffinePoint) { self.init(x: p.x, y: p.y, z: .one) }

    var isInfinity: Bool { z.isZero }

    /// The affine point, or nil at infinity (one field inversion).
    var affine: P256AffinePoint? {
        guard !isInfinity else { return nil }
        let zInverse = z.inverse()
        let zInverse2 = zInverse.squared()
        return P256AffinePoint(x: x * zInverse2, y: y * zInverse2 * zInverse)
    }

    /// 2·self (dbl-2001-b: 3M + 5S). At infinity Z stays 0; P-256 has no point of order 2.
    func doubled() -> P256JacobianPoint {
        let delta = z.squared()
        let gamma = y.squared()
        let beta = x * gamma
        let t = (x - delta) * (x + delta)
        let alpha = t + t + t
        let beta2 = beta + beta
        let beta4 = beta2 + beta2
        let x3 = alpha.squared() - (beta4 + beta4)
        let z3 = (y + z).squared() - gamma - delta
        let gamma2 = gamma.squared()
        let gamma2x2 = gamma2 + gamma2
        let gamma2x4 = gamma2x2 + gamma2x2
        let y3 = alpha * (beta4 - x3) - (gamma2x4 + gamma2x4)
        return P256JacobianPoint(x: x3, y: y3, z: z3)
    }

    /// self + other (add-2007-bl: 11M + 5S), for every pair of points.
    func adding(_ other: P256JacobianPoint) -> P256JacobianPoint {
        if isInfinity { return other }
        if other.isInfinity { return self }
        let z1z1 = z.squared()
        let z2z2 = other.z.squared()
        let u1 = x * z2z2
        let u2 = other.x * z1z1
        let s1 = y * other.z * z2z2
        let s2 = other.y * z * z1z1
        let h = u2 - u1
        let rHalf = s2 - s1
        if h.isZero {
            // Same x: the same point (double it) or opposite points (their sum is infinity).
            return rHalf.isZero ? doubled() : .infinity
        }
        let h2 = h + h
        let i = h2.squared()
        let j = h * i
        let r = rHalf + rHalf
        let v = u1 * i
        let x3 = r.squared() - j - (v + v)
        let s1j = s1 * j
        let y3 = r * (v - x3) - (s1j + s1j)
        let z3 = ((z + other.z).squared() - z1z1 - z2z2) * h
        return P256JacobianPoint(x: x3, y: y3, z: z3)
    }

    /// self + q for an affine q (madd-2007-bl: 7M + 4S, Z₂ = 1 saving the rest), for every pair.
    func adding(_ q: P256AffinePoint) -> P256JacobianPoint {
        if isInfinity { return P256JacobianPoint(q) }
        let z1z1 = z.squared()
        let u2 = q.x * z1z1
        let s2 = q.y * z * z1z1
        let h = u2 - x
        let rHalf = s2 - y
        if h.isZero {
            return rHalf.isZero ? doubled() : .infinity
        }
        let hh = h.squared()
        let hh2 = hh + hh
        let i = hh2 + hh2
        let j = h * i
        let r = rHalf + rHalf
        let v = x * i
        let x3 = r.squared() - j - (v + v)
        let yj = y * j
        let y3 = r * (v - x3) - (yj + yj)
        let z3 = (z + h).squared() - z1z1 - hh
        return P256JacobianPoint(x: x3, y: y3, z: z3)
    }

    /// 0·P, 1·P, …, 15·P: the table of a 4-bit window (entry 0 unused).
    static func windowTable(_ p: P256JacobianPoint) -> [P256JacobianPoint] {
        var table = [P256JacobianPoint](repeating: .infinity, count: 16)
        table[1] = p
        table[2] = p.doubled()
        for k in 3..<16 { table[k] = table[k - 1].adding(p) }
        return table
    }

    /// 1·G … 15·G in affine coordinates (so that adding them is a mixed addition), made once;
    /// entry 0 is unused.
    static let generatorTable: [P256AffinePoint] = windowTable(P256JacobianPoint(P256.generator)).map { $0.affine ?? P256.generator }

    /// a·G + b·Q, four bits of both scalars at a time, most significant first (Straus–Shamir with
    /// fixed 4-bit windows: 252 doublings and at most 128 additions, plus 14 for Q's table).
    static func multiplyGenerator(by a: UInt256, adding b: UInt256, times q: P256JacobianPoint) -> P256JacobianPoint {
        let gTable = generatorTable
        let qTable = windowTable(q)
        var acc = P256JacobianPoint.infinity
        for i in stride(from: 63, through: 0, by: -1) {
            if i != 63 {
                acc = acc.doubled().doubled().doubled().doubled()
            }
            let da = a.nibble(i), db = b.nibble(i)
            if da != 0 { acc = acc.adding(gTable[da]) }
            if db != 0 { acc = acc.adding(qTable[db]) }
        }
        return acc
    }
}
