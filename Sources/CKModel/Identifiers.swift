import CKCrypto
import Foundation

/// Identifiers: random UUIDs for new records, user record names.
public enum Identifiers {
    /// A random UUID string, upper-case like Foundation's.
    public static func newRecordName() -> String { UUID().uuidString }

    /// A random UUID in lower case, as the `uuid` of Apple's error responses.
    public static func newErrorUUID() -> String { UUID().uuidString.lowercased() }

    /// A short GUID shaped like those in iCloud share URLs (`www.icloud.com/share/<GUID>`):
    /// `0` and 24 URL-safe characters.
    public static func newShortGUID() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-")
        return "0" + String((0..<24).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }

    /// A user record name as CloudKit prints them: `_` + 32 lowercase hex digits.
    public static func newUserRecordName() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255) }
        return "_" + Hex.string(bytes)
    }

    public static func isUserRecordName(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 33, u[0] == UInt8(ascii: "_") else { return false }
        return u.dropFirst().allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
