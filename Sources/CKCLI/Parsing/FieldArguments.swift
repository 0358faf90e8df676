import CKCore
import CKJSON
import CKModel
import Foundation

/// Field values from the command line: `name=value` (typed by the schema, else inferred),
/// `name:TYPE=value`, and cktool's `--fields-json`. Files (`@path`) and stdin (`@-`) are read
/// here and handed to the core, which stores asset bytes only if the save succeeds.
struct FieldInput {
    var fields: [String: RecordField?] = [:]
    /// Values given without a type in a JSON field object (they take the field's type on save).
    var untyped: [String: JSONValue] = [:]
    var assets: [String: [UInt8]] = [:]
}

/// One `name=value` or `name:TYPE=value` argument, checked for form but not yet read: its
/// type may come from the schema.
struct FieldArgument {
    var name: String
    /// The type written in the argument, if any.
    var type: FieldType?
    var text: String
}

/// The type an untyped argument takes, and where it came from (for error messages): the API's
/// answer (`CloudKitAPI.fieldTypeHints`).
typealias KnownFieldType = FieldTypeHint

/// stdin, readable by one value (`@-`).
final class StdinSource {
    /// Reads stdin, at most the limit given (LIMIT_EXCEEDED beyond it).
    private let read: (Int) throws -> [UInt8]
    private var taken: String?
    init(_ read: @escaping (Int) throws -> [UInt8]) { self.read = read }

    /// The value of `field` from stdin: an asset's file up to the asset limit, any other value
    /// up to a request's.
    func take(for field: String, command: [String], limit: Int = Limits.requestBytes) throws -> [UInt8] {
        if let t = taken {
            throw UsageError("only one value can be read from stdin (@-); '\(t)' already reads it, so '\(field)' cannot", command: command)
        }
        taken = field
        return try read(limit)
    }
}

struct FieldArguments {
    let currentDirectory: String
    let command: [String]
    /// The zone of dates and times written without an offset (SPEC §4: local time, `TZ`),
    /// looked up only when a value needs it (finding the system's zone reads the zone database).
    var timeZone: () -> TimeZone = { .current }
    /// Where `@-` reads; nil where stdin is not available for values.
    var stdin: StdinSource? = nil

    /// The local time zone as the environment names it: `TZ` (an IANA name, optionally after
    /// `:`; empty means UTC, as in POSIX), else the system's zone.
    static func localTimeZone(_ environment: [String: String]) -> TimeZone {
        guard var tz = environment["TZ"] else { return .current }
        if tz.hasPrefix(":") { tz.removeFirst() }
        if tz.isEmpty { return TimeZone(secondsFromGMT: 0)! }
        return TimeZone(identifier: tz) ?? .current
    }

    /// Types other systems have that CloudKit spells otherwise (it has no boolean and no
    /// date-only type): the CloudKit type to write instead, with the argument rewritten.
    static func typeHint(_ tag: String, field: String, value: String) -> String? {
        switch tag {
        case "BOOL", "BOOLEAN":
            let bit = ["true", "yes", "1"].contains(value.lowercased()) ? "1" : "0"
            return "CloudKit has no boolean type: a flag is INT64 0 or 1 (write \(field):INT64=\(bit), or \(field)=\(bit == "1" ? "true" : "false"), which a new field takes as INT64)"
        case "DATE", "DATETIME", "TIME":
            return "CloudKit's dates are TIMESTAMP (write \(field):TIMESTAMP=\(value))"
        case "INT", "INTEGER", "LONG":
            return "CloudKit's integers are INT64 (write \(field):INT64=\(value))"
        case "FLOAT", "NUMBER", "REAL":
            return "CloudKit's numbers with a fraction are DOUBLE (write \(field):DOUBLE=\(value))"
        case "DATA", "BLOB":
            return "CloudKit's raw bytes are BYTES (write \(field):BYTES=BASE64 or \(field):BYTES=@FILE)"
        default:
            return nil
        }
    }

    /// Checks the form of every argument (usage errors come before anything is read).
    func scan(_ args: [String]) throws -> [FieldArgument] {
        var out: [FieldArgument] = []
        var seen = Set<String>()
        var readsStdin: [String] = []
        for a in args {
            guard let eq = a.firstIndex(of: "=") else {
                throw UsageError("field argument '\(a)' must look like name=value or name:TYPE=value", command: command)
            }
            var name = String(a[..<eq])
            let text = String(a[a.index(after: eq)...])
            var type: FieldType?
            if let colon = name.firstIndex(of: ":") {
                let tag = String(name[name.index(after: colon)...])
                name = String(name[..<colon])
                guard let t = FieldType(tag: tag.uppercased()), t.base != .unknown else {
                    if let hint = FieldArguments.typeHint(tag.uppercased(), field: name, value: text) {
                        throw UsageError("unknown field type '\(tag)' in '\(a)'; \(hint)", command: command)
                    }
                    throw UsageError("unknown field type '\(tag)' in '\(a)'; types: \(FieldType.allTags.joined(separator: ", ")), ASSET", command: command)
                }
                type = t
            }
            try Names.validateFieldName(name)
            guard seen.insert(name).inserted else { throw UsageError("field '\(name)' given more than once", command: command) }
            if text == "@-" { readsStdin.append(name) }
            out.append(FieldArgument(name: name, type: type, text: text))
        }
        if readsStdin.count > 1 {
            throw UsageError("only one value can be read from stdin (@-), but \(readsStdin.map { "'\($0)'" }.joined(separator: " and ")) both ask for it", command: command)
        }
        return out
    }

    /// Reads the values: a written type wins, then the type `known` gives (the schema's, or
    /// the existing record's), then the type inferred from the text.
    func read(_ args: [FieldArgument], known: (String) -> KnownFieldType? = { _ in nil }) throws -> FieldInput {
        var out = FieldInput()
        for a in args {
            let t: FieldType
            var origin = ""
            if let w = a.type {
                t = w
            } else if let k = known(a.name) {
                t = k.type
                origin = k.origin
            } else {
                t = Self.infer(a.text)
            }
            let value = try convert(a.text, type: t, name: a.name, assets: &out.assets, origin: origin)
            out.fields[a.name] = .some(RecordField(type: t, value: value))
        }
        return out
    }

    func parse(_ args: [String]) throws -> FieldInput { try read(try scan(args)) }

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
    static func infer(_ raw: String) -> FieldType {
        if raw == "true" || raw == "false" { return FieldType(.int64) }
        switch jsonNumber(raw) {
        case .integer?: if Int64(raw) != nil { return FieldType(.int64) }
        case .decimal?: if let d = Double(raw), d.isFinite { return FieldType(.double) }
        case nil: if Timestamps.parseISO8601(raw) != nil { return FieldType(.timestamp) }
        }
        return FieldType(.string)
    }

    enum NumberForm { case integer, decimal }

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func jsonNumber(_ s: String) -> NumberForm? {
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
    static func integer(_ s: String) -> Int64? {
        let d = s.hasPrefix("-") || s.hasPrefix("+") ? s.dropFirst() : Substring(s)
        guard !d.isEmpty, d.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(s)
    }

    /// A number once the type says DOUBLE: decimal notation with an optional sign, fraction
    /// and exponent (`5`, `+5`, `.5`, `5.`, `1e5`); not hexadecimal, NaN or infinity.
    static func decimal(_ s: String) -> Double? {
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

    func bad(_ name: String, _ type: FieldType, _ raw: String, _ expected: String, origin: String = "") -> CloudKitError {
        CloudKitError.badRequest("field '\(name)' is \(type)\(origin) but '\(Names.describe(raw))' is not \(expected)")
    }

    /// Converts a command-line value to the canonical JSON of `type`. With `files`, a STRING,
    /// BYTES or ASSET value `@path` is the content of that file, `@-` is stdin, and `@@…`
    /// stands for a value that begins with a literal `@`.
    func convert(_ raw: String, type: FieldType, name: String, assets: inout [String: [UInt8]], origin: String = "",
                 files: Bool = true) throws -> JSONValue {
        if type.isList {
            let t = raw.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("[") {
                let j: JSONValue
                do { j = try JSONParser.parse(t) } catch { throw CloudKitError.badRequest("field '\(name)': list value is not a valid JSON array: \(error)") }
                guard let a = j.arrayValue else { throw CloudKitError.badRequest("field '\(name)' is \(type)\(origin) but the value is not an array") }
                return .array(try a.enumerated().map { i, e in
                    if let s = e.stringValue { return try convert(s, type: type.element, name: "\(name)[\(i)]", assets: &assets, origin: origin, files: files) }
                    return try RecordField.canonical(name: "\(name)[\(i)]", type: type.element, value: e)
                })
            }
            if t.isEmpty { return .array([]) }
            let sep: Character = type.base == .location ? ";" : ","
            return .array(try t.split(separator: sep, omittingEmptySubsequences: false).map {
                try convert(String($0).trimmingCharacters(in: .whitespaces), type: type.element, name: name, assets: &assets, origin: origin, files: files)
            })
        }
        let fromFile = files && raw.hasPrefix("@") && !raw.hasPrefix("@@")
        switch type.base {
        case .string:
            guard files, raw.hasPrefix("@") else { return .string(raw) }
            guard fromFile else { return .string(String(raw.dropFirst())) }
            let bytes = try fileBytes(raw, field: name)
            guard let s = String(bytes: bytes, encoding: .utf8) else {
                throw CloudKitError.badRequest("field '\(name)' is STRING\(origin) but \(raw == "@-" ? "stdin" : "'\(Names.describe(String(raw.dropFirst())))'") is not UTF-8 text (for raw bytes use \(name):BYTES=\(raw))")
            }
            return .string(s)
        case .int64:
            if raw == "true" { return 1 }
            if raw == "false" { return 0 }
            guard let i = Self.integer(raw) else { throw bad(name, type, raw, "a 64-bit integer", origin: origin) }
            return .int(i)
        case .double:
            guard let d = Self.decimal(raw) else { throw bad(name, type, raw, "a finite decimal number", origin: origin) }
            return .double(d)
        case .timestamp:
            if let ms = Self.integer(raw) { return .int(ms) }
            guard let ms = Timestamps.parseISO8601(raw, timeZone: timeZone()) else {
                throw bad(name, type, raw, "an ISO-8601 date or date-time (2019-10-28, 2019-10-28T09:30, 2019-10-28T09:30:00Z) or milliseconds since 1970", origin: origin)
            }
            return .int(ms)
        case .bytes, .encryptedBytes:
            if fromFile { return .string(Data(try fileBytes(raw, field: name)).base64EncodedString()) }
            guard Data(base64Encoded: raw) != nil else { throw bad(name, type, raw, "base64 (or @FILE, or @- for stdin)", origin: origin) }
            return .string(raw)
        case .reference:
            let parts = raw.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard parts.count <= 2, !parts[0].isEmpty else { throw bad(name, type, raw, "recordName[,NONE|DELETE_SELF|VALIDATE]", origin: origin) }
            try Names.validateRecordName(parts[0])
            var action = Reference.Action.none
            if parts.count == 2 {
                guard let a = Reference.Action(rawValue: parts[1].uppercased()) else { throw bad(name, type, raw, "recordName[,NONE|DELETE_SELF|VALIDATE]", origin: origin) }
                action = a
            }
            return Reference(recordName: parts[0], action: action).json
        case .location:
            let parts = raw.split(separator: ",").map { Self.decimal($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let lat = parts[0], let lon = parts[1] else { throw bad(name, type, raw, "'latitude,longitude'", origin: origin) }
            return try RecordField.canonical(name: name, type: type, value: ["latitude": .double(lat), "longitude": .double(lon)])
        case .asset:
            guard fromFile else { throw bad(name, type, raw, "@FILE (the path of the asset's file, or @- for stdin)", origin: origin) }
            let bytes = try fileBytes(raw, field: name, limit: Int(Limits.assetBytes))
            let sum = AssetValue.checksum(of: bytes)
            assets[sum] = bytes
            return ["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))]
        case .unknown:
            throw bad(name, type, raw, "a typed value", origin: origin)
        }
    }

    /// The bytes `@path` or `@-` names.
    func fileBytes(_ raw: String, field: String, limit: Int = Limits.requestBytes) throws -> [UInt8] {
        let path = String(raw.dropFirst())
        guard path == "-" else { return try readFile(path, field: field) }
        guard let s = stdin else { throw CloudKitError.badRequest("field '\(field)': stdin (@-) is not available here") }
        return try s.take(for: field, command: command, limit: limit)
    }

    func readFile(_ path: String, field: String) throws -> [UInt8] {
        let p = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        do { return try CloudKitAPI.readUserFile(p, shownAs: path) } catch let e as CloudKitError {
            throw CloudKitError.badRequest("field '\(field)': \(e.reason) (a value starting with @ names a file; write @@ for a literal @)")
        }
    }

    /// cktool's `--fields-json`: `{"name": {"type": "stringType", "value": …}}`; Web Services
    /// type tags are accepted too. Timestamps may be ISO-8601 strings, assets `@path`.
    func parseFieldsJSON(_ text: String) throws -> FieldInput {
        let j: JSONValue
        do { j = try JSONParser.parse(text) } catch { throw CloudKitError.badRequest("--fields-json is not valid JSON: \(error)") }
        guard let o = j.objectValue else { throw CloudKitError.badRequest("--fields-json must be a JSON object of fields") }
        return try parseFieldObject(o)
    }

    /// A `fields` object whose string values may need converting (`@file` assets, ISO dates).
    func parseFieldObject(_ o: [String: JSONValue]) throws -> FieldInput {
        var out = FieldInput()
        for (name, v) in o {
            try Names.validateFieldName(name)
            guard let fo = v.objectValue else { throw CloudKitError.badRequest("field '\(name)' must be an object {\"type\": …, \"value\": …}") }
            if let tag = fo["type"]?.stringValue, let t = FieldType(tag: tag), let s = fo["value"]?.stringValue,
               !t.isList, t.base == .asset || t.base == .timestamp || (t.base == .bytes && s.hasPrefix("@")) {
                out.fields[name] = .some(RecordField(type: t, value: try convert(s, type: t, name: name, assets: &out.assets)))
                continue
            }
            if let tag = fo["type"]?.stringValue, let t = FieldType(tag: tag), t.isList, let a = fo["value"]?.arrayValue,
               t.base == .asset || t.base == .timestamp {
                let conv = try a.enumerated().map { i, e -> JSONValue in
                    if let s = e.stringValue { return try convert(s, type: t.element, name: "\(name)[\(i)]", assets: &out.assets) }
                    return try RecordField.canonical(name: "\(name)[\(i)]", type: t.element, value: e)
                }
                out.fields[name] = .some(RecordField(type: t, value: .array(conv)))
                continue
            }
            var norm = fo
            if let tag = fo["type"]?.stringValue, let t = FieldType(tag: tag) { norm["type"] = .string(t.rawValue) }
            out.fields[name] = try RecordField.parse(name: name, json: .object(norm))
            if let raw = RecordField.untypedValue(v) { out.untyped[name] = raw }
        }
        return out
    }
}
