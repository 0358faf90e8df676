import Foundation

/// Identifiers: random UUIDs for new records, user record names, hex helpers.
public enum Identifiers {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    public static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(hexDigits[Int(b >> 4)]); out.append(hexDigits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// A random UUID string, upper-case like Foundation's.
    public static func newRecordName() -> String { UUID().uuidString }

    /// A user record name as CloudKit prints them: `_` + 32 lowercase hex digits.
    public static func newUserRecordName() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255) }
        return "_" + hex(bytes)
    }

    /// A deterministic UUID-shaped string from some bytes.
    public static func uuid(from bytes: [UInt8]) -> String {
        let h = hex(SHA256.digest(bytes).prefix(16))
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }

    public static func isUserRecordName(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 33, u[0] == UInt8(ascii: "_") else { return false }
        return u.dropFirst().allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
