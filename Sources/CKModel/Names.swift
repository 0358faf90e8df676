import CKCrypto
import CKJSON

/// Name rules from CloudKit (reference §1.5, §6), checked before anything touches the disk.
public enum Names {
    public static let maxLength = 255

    /// A name as error messages show it: control characters escaped, at most `limit` (40)
    /// characters, so a hostile multi-megabyte name never fills a terminal or a log.
    public static func describe(_ s: String, limit: Int = 40) -> String {
        var shown = ""
        var n = 0
        for u in s.unicodeScalars {
            if n == limit { return shown + "…" }
            shown += isControl(u) ? "\\u{\(String(u.value, radix: 16))}" : String(u)
            n += 1
        }
        return shown
    }

    /// C0, DEL and C1 control characters (U+0000–U+001F, U+007F–U+009F).
    package static func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (u.value >= 0x7F && u.value <= 0x9F) }

    /// A whitespace character as a refused token's reason names it, with the escape a URL
    /// shows it in (`a newline (%0A)`: a token pasted with its newline is the common slip);
    /// nil for any other character.
    package static func whitespace(_ u: Unicode.Scalar) -> String? {
        switch u {
        case "\n": return "a newline (%0A)"
        case "\r": return "a carriage return (%0D)"
        case " ": return "a space (%20)"
        case "\t": return "a tab (%09)"
        default: return u.properties.isWhitespace ? "whitespace (U+\(String(u.value, radix: 16, uppercase: true)))" : nil
        }
    }

    /// Where the whitespace of text trimmed of it is (`ends in a newline (%0A)`, `starts with
    /// a space (%20)`).
    package static func whitespaceAtEnds(_ s: String) -> String {
        s.unicodeScalars.last.flatMap(whitespace).map { "ends in " + $0 }
            ?? "starts with " + (s.unicodeScalars.first.flatMap(whitespace) ?? "whitespace")
    }

    /// Names: 1…255 bytes of UTF-8 (limits bound bytes, never characters: one "character" can
    /// be megabytes of combining marks), no NUL or control characters. Names that are not
    /// record names (zones, subscriptions, devices) also refuse `/`, `\`, `.` and `..`.
    /// Names are compared by their bytes everywhere: two spellings of one Unicode string
    /// (`é` precomposed or decomposed) are two names, as on CloudKit's servers.
    public static func validateName(_ s: String, noun: String, pathCharacters: Bool = false) throws {
        if s.isEmpty { throw CloudKitError.badRequest("\(noun) must not be empty") }
        if s.utf8.count > maxLength {
            throw CloudKitError.badRequest("\(noun) '\(describe(s))' is \(s.utf8.count) bytes long; the limit is \(maxLength) bytes")
        }
        for u in s.unicodeScalars {
            if isControl(u) {
                throw CloudKitError.badRequest("\(noun) '\(describe(s))' contains a control character (\\u{\(String(u.value, radix: 16))})")
            }
            if !pathCharacters && (u == "/" || u == "\\") {
                throw CloudKitError.badRequest("\(noun) '\(describe(s))' contains '\(u)', which is not allowed")
            }
        }
        if !pathCharacters && (s == "." || s == "..") { throw CloudKitError.badRequest("\(noun) '\(s)' is not allowed") }
    }

    /// Record names as CloudKit takes them: `/`, `+`, `\` and dots are ordinary characters (a
    /// tenth of real record names hold a `/`); only the path encoding cares (`storage.md`).
    public static func validateRecordName(_ s: String) throws { try validateName(s, noun: "record name", pathCharacters: true) }
    public static func validateZoneName(_ s: String) throws { try validateName(s, noun: "zone name") }

    /// A name made from others (a default subscription ID) cut to the byte limit, keeping it
    /// unique with a digest of the whole.
    public static func bounded(_ s: String) -> String {
        guard s.utf8.count > maxLength else { return s }
        var head = ""
        for ch in s {
            if head.utf8.count + ch.utf8.count > maxLength - 17 { break }
            head.append(ch)
        }
        return head + "-" + Hex.string(SHA256.digest(Array(s.utf8)).prefix(8))
    }

    /// Identifiers (field names, record type names): an ASCII letter, then letters, digits or `_`.
    package static func validateIdentifier(_ s: String, kind: String) throws {
        if s.isEmpty { throw CloudKitError.badRequest("\(kind) name must not be empty") }
        if s.utf8.count > maxLength {
            throw CloudKitError.badRequest("\(kind) name '\(describe(s))' is \(s.utf8.count) bytes long; the limit is \(maxLength)")
        }
        let u = Array(s.utf8)
        if u[0] == UInt8(ascii: "_") {
            throw CloudKitError.badRequest("\(kind) name '\(describe(s))' starts with '_', which is reserved for system fields")
        }
        func letter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        guard letter(u[0]), u.allSatisfy({ letter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") }) else {
            throw CloudKitError.badRequest("\(kind) name '\(describe(s))' is invalid: it must start with an ASCII letter and contain only letters, digits and '_'")
        }
    }

    public static func validateFieldName(_ s: String) throws { try validateIdentifier(s, kind: "field") }
    public static func validateRecordType(_ s: String) throws { try validateIdentifier(s, kind: "record type") }

    /// Container identifiers start with `iCloud.` and use letters, digits, `.`, `-` and `_`.
    public static func validateContainerID(_ s: String) throws {
        // By bytes, in place (every request asks, three times): String's hasPrefix compares by
        // canonical equivalence, and the generic views cost more than the checks.
        var bytes = s
        let (prefixed, ok) = bytes.withUTF8 { u -> (Bool, Bool) in
            guard u.count > 7, u.count <= maxLength, u.starts(with: "iCloud.".utf8) else { return (false, false) }
            // Letters, digits, '.', '-', '_', and no two dots in a row.
            var dot = false
            for b in u {
                let isDot = b == 0x2E
                guard (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || isDot || b == 0x2D || b == 0x5F,
                      !(isDot && dot) else { return (true, false) }
                dot = isDot
            }
            return (true, true)
        }
        guard prefixed else {
            throw CloudKitError.badRequest("container identifier '\(describe(s))' must start with 'iCloud.' (e.g. iCloud.com.example.app)")
        }
        guard ok else {
            throw CloudKitError.badRequest("container identifier '\(describe(s))' may contain only letters, digits, '.', '-' and '_'")
        }
    }
}

/// A name compared and hashed by its bytes. Swift's `String` equality is canonical equivalence
/// (`"é" == "e\u{301}"`), which would merge two records CloudKit keeps apart; every map or set
/// of record or zone names in the store is keyed by `NameKey` instead.
public struct NameKey: Hashable, Comparable, Sendable {
    public let bytes: [UInt8]
    public init(_ s: String) { bytes = Array(s.utf8) }
    public var string: String { String(decoding: bytes, as: UTF8.self) }
    public static func < (a: NameKey, b: NameKey) -> Bool { a.bytes.precedes(b.bytes) }

    /// In one `memcmp`: the synthesized equality compared the arrays a byte at a time, and
    /// every lookup in a map of names ends in it (1 % of an import).
    public static func == (a: NameKey, b: NameKey) -> Bool {
        a.bytes.count == b.bytes.count && a.bytes[...].byteOrder(b.bytes[...]) == 0
    }

    /// The bytes in one call: an array's own `Hashable` feeds the hasher a byte at a time,
    /// and every map of names hashes its keys (an import, several maps a record).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

