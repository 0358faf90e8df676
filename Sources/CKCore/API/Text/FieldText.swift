import CKJSON
import CKModel
import Foundation

/// Field values written as text, as ck's command line and the console take them: a type for a
/// value given without one (`infer`), and the canonical JSON of a value of a known type
/// (`value`). Files (`@path`, ASSET values) are the command line's: it passes a `special`
/// reader consulted before the rules here.
public struct FieldText: Sendable {
    /// The zone of dates and times written without an offset, looked up only when a value
    /// needs it (finding the system's zone reads the zone database).
    public var timeZone: @Sendable () -> TimeZone

    public init(timeZone: @escaping @Sendable () -> TimeZone = { .current }) {
        self.timeZone = timeZone
    }

    /// The local time zone as an environment names it: `TZ` (an IANA name, optionally after
    /// `:`; empty means UTC, as in POSIX), else the system's zone.
    public static func localTimeZone(_ environment: [String: String]) -> TimeZone {
        guard var tz = environment["TZ"] else { return .current }
        if tz.hasPrefix(":") { tz.removeFirst() }
        if tz.isEmpty { return TimeZone(secondsFromGMT: 0)! }
        return TimeZone(identifier: tz) ?? .current
    }

    // MARK: inference

    /// The type of a value given without one, for a field the schema (and the record) does
    /// not know yet — one rule, documented in Docs/records.md:
    /// - `true` and `false`, in lowercase, are INT64 1 and 0 (CloudKit has no boolean);
    /// - a JSON number literal (no `+`, no leading zeros, digits on both sides of a `.`) is
    ///   INT64 when it has neither fraction nor exponent and fits in 64 bits, DOUBLE when it
    ///   has one; any other text, `02139`, `+5`, `.5`, `5.`, `1e999`, `NaN`, `inf` or a 20-digit
    ///   integer included, is not a number;
    /// - an ISO-8601 date or date-time is a TIMESTAMP;
    /// - anything else is a STRING.
    public static func infer(_ raw: String) -> FieldType {
        if raw == "true" || raw == "false" { return FieldType(.int64) }
        switch jsonNumber(raw) {
        case .integer?: if Int64(raw) != nil { return FieldType(.int64) }
        case .decimal?: if let d = Double(raw), d.isFinite { return FieldType(.double) }
        case nil: if Timestamps.parseISO8601(raw) != nil { return FieldType(.timestamp) }
        }
        return FieldType(.string)
    }

    public enum NumberForm { case integer, decimal }

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    public static func jsonNumber(_ s: String) -> NumberForm? {
        let u = Array(s.utf8)
        var i = 0
        func isDigit(_ k: Int) -> Bool { k < u.count && u[k] >= 0x30 && u[k] <= 0x39 }
        func digits() -> Int { let start = i; while isDigit(i) { i += 1 }; return i - start }
        if i < u.count && u[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return nil }
        if u[i] == UInt8(ascii: "0") { i += 1; if isDigit(i) { return nil } } else { _ = digits() }
        var form = NumberForm.integer
        if i < u.count && u[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return nil }
            form = .decimal
        }
        if i < u.count && (u[i] == UInt8(ascii: "e") || u[i] == UInt8(ascii: "E")) {
            i += 1
            if i < u.count && (u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-")) { i += 1 }
            guard digits() > 0 else { return nil }
            form = .decimal
        }
        return i == u.count ? form : nil
    }

    /// An integer once the type says INT64 (or TIMESTAMP milliseconds): an optional sign and
    /// digits; leading zeros are fine (`007` is 7).
    public static func integer(_ s: String) -> Int64? {
        let d = s.hasPrefix("-") || s.hasPrefix("+") ? s.dropFirst() : Substring(s)
        guard !d.isEmpty, d.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(s)
    }

    /// A number once the type says DOUBLE: decimal notation with an optional sign, fraction
    /// and exponent (`5`, `+5`, `.5`, `5.`, `1e5`); not hexadecimal, NaN or infinity.
    public static func decimal(_ s: String) -> Double? {
        var body = Substring(s)
        if body.hasPrefix("-") || body.hasPrefix("+") { body = body.dropFirst() }
        var mantissa = body, exponent: Substring?
        if let e = body.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = body[..<e]
            var x = body[body.index(after: e)...]
            if x.hasPrefix("-") || x.hasPrefix("+") { x = x.dropFirst() }
            exponent = x
        }
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        func allDigits(_ p: Substring) -> Bool { p.allSatisfy { $0.isASCII && $0.isNumber } }
        guard parts.count <= 2, parts.allSatisfy(allDigits), parts.contains(where: { !$0.isEmpty }) else { return nil }
        if let x = exponent { guard !x.isEmpty, allDigits(x) else { return nil } }
        guard let d = Double(s), d.isFinite else { return nil }
        return d
    }

    // MARK: reading a value of a known type

    public static func bad(_ name: String, _ type: FieldType, _ raw: String, _ expected: String, origin: String = "") -> CloudKitError {
        CloudKitError.badRequest("field '\(name)' is \(type)\(origin) but '\(Names.describe(raw))' is not \(expected)")
    }

    /// What reads a value the rules here do not (a file, for the command line): the value, or
    /// nil to leave it to them. Called with the raw text, the scalar type and the field's name.
    public typealias Special = (String, FieldType, String) throws -> JSONValue?

    /// The canonical JSON of `raw` as a value of `type`. A list is a JSON array, or items split
    /// on `,` (`;` for locations). `origin` says where the type came from, for errors.
    public func value(_ raw: String, type: FieldType, name: String, origin: String = "", special: Special? = nil) throws -> JSONValue {
        if type.isList {
            let t = raw.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("[") {
                let j: JSONValue
                do { j = try JSONParser.parse(t) } catch { throw CloudKitError.badRequest("field '\(name)': list value is not a valid JSON array: \(error)") }
                guard let a = j.arrayValue else { throw CloudKitError.badRequest("field '\(name)' is \(type)\(origin) but the value is not an array") }
                return .array(try a.enumerated().map { i, e in
                    if let s = e.stringValue { return try value(s, type: type.element, name: "\(name)[\(i)]", origin: origin, special: special) }
                    return try RecordField.canonical(name: "\(name)[\(i)]", type: type.element, value: e)
                })
            }
            if t.isEmpty { return .array([]) }
            let sep: Character = type.base == .location ? ";" : ","
            return .array(try t.split(separator: sep, omittingEmptySubsequences: false).map {
                try value(String($0).trimmingCharacters(in: .whitespaces), type: type.element, name: name, origin: origin, special: special)
            })
        }
        if let v = try special?(raw, type, name) { return v }
        switch type.base {
        case .string:
            return .string(raw)
        case .int64:
            if raw == "true" { return 1 }
            if raw == "false" { return 0 }
            guard let i = Self.integer(raw) else { throw Self.bad(name, type, raw, "a 64-bit integer", origin: origin) }
            return .int(i)
        case .double:
            guard let d = Self.decimal(raw) else { throw Self.bad(name, type, raw, "a finite decimal number", origin: origin) }
            return .double(d)
        case .timestamp:
            if let ms = Self.integer(raw) { return .int(ms) }
            guard let ms = Timestamps.parseISO8601(raw, timeZone: timeZone()) else {
                throw Self.bad(name, type, raw, "an ISO-8601 date or date-time (2019-10-28, 2019-10-28T09:30, 2019-10-28T09:30:00Z) or milliseconds since 1970", origin: origin)
            }
            return .int(ms)
        case .bytes, .encryptedBytes:
            guard Data(base64Encoded: raw) != nil else { throw Self.bad(name, type, raw, "base64 (or @FILE, or @- for stdin)", origin: origin) }
            return .string(raw)
        case .reference:
            let parts = raw.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard parts.count <= 2, !parts[0].isEmpty else { throw Self.bad(name, type, raw, "recordName[,NONE|DELETE_SELF|VALIDATE]", origin: origin) }
            try Names.validateRecordName(parts[0])
            var action = Reference.Action.none
            if parts.count == 2 {
                guard let a = Reference.Action(rawValue: parts[1].uppercased()) else { throw Self.bad(name, type, raw, "recordName[,NONE|DELETE_SELF|VALIDATE]", origin: origin) }
                action = a
            }
            return Reference(recordName: parts[0], action: action).json
        case .location:
            let parts = raw.split(separator: ",").map { Self.decimal($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let lat = parts[0], let lon = parts[1] else { throw Self.bad(name, type, raw, "'latitude,longitude'", origin: origin) }
            return try RecordField.canonical(name: name, type: type, value: ["latitude": .double(lat), "longitude": .double(lon)])
        case .asset:
            throw Self.bad(name, type, raw, "@FILE (the path of the asset's file, or @- for stdin)", origin: origin)
        case .unknown:
            throw Self.bad(name, type, raw, "a typed value", origin: origin)
        }
    }
}
