/// Checks on user-supplied identity strings.
public enum Validation {
    public static func appleID(_ s: String) throws {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        let ok = parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".")
            && !parts[1].hasSuffix(".") && s.count <= 255
            && s.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "/" && $0 != "\\" }
        if !ok { throw CloudKitError.badRequest("'\(s)' is not a valid Apple ID (expected an email address like alice@example.com)") }
    }

    public static func phoneNumber(_ s: String) throws {
        let digits = s.filter(\.isNumber)
        let ok = s.hasPrefix("+") && (7...15).contains(digits.count)
            && s.dropFirst().allSatisfy { $0.isASCII && ($0.isNumber || $0 == " " || $0 == "-") }
        if !ok { throw CloudKitError.badRequest("'\(s)' is not a valid phone number (expected international form like +1 408 555 0100)") }
    }
}
