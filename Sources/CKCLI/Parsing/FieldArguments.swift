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
                t = FieldText.infer(a.text)
            }
            let value = try convert(a.text, type: t, name: a.name, assets: &out.assets, origin: origin)
            out.fields[a.name] = .some(RecordField(type: t, value: value))
        }
        return out
    }

    func parse(_ args: [String]) throws -> FieldInput { try read(try scan(args)) }

    // MARK: reading a value of a known type

    /// Converts a command-line value to the canonical JSON of `type` (FieldText). With `files`,
    /// a STRING, BYTES or ASSET value `@path` is the content of that file, `@-` is stdin, and
    /// `@@…` stands for a value that begins with a literal `@`.
    func convert(_ raw: String, type: FieldType, name: String, assets: inout [String: [UInt8]], origin: String = "",
                 files: Bool = true) throws -> JSONValue {
        var read: [String: [UInt8]] = [:]
        let text = FieldText(timeZone: { [timeZone] in timeZone() })
        let out = try text.value(raw, type: type, name: name, origin: origin, special: !files ? nil : { raw, type, name in
            guard raw.hasPrefix("@") else { return nil }
            let fromFile = !raw.hasPrefix("@@")
            switch type.base {
            case .string:
                guard fromFile else { return .string(String(raw.dropFirst())) }
                let bytes = try fileBytes(raw, field: name)
                guard let s = String(bytes: bytes, encoding: .utf8) else {
                    throw CloudKitError.badRequest("field '\(name)' is STRING\(origin) but \(raw == "@-" ? "stdin" : "'\(Names.describe(String(raw.dropFirst())))'") is not UTF-8 text (for raw bytes use \(name):BYTES=\(raw))")
                }
                return .string(s)
            case .bytes, .encryptedBytes:
                return fromFile ? .string(Data(try fileBytes(raw, field: name)).base64EncodedString()) : nil
            case .asset:
                guard fromFile else { return nil }
                let bytes = try fileBytes(raw, field: name, limit: Int(Limits.assetBytes))
                let sum = AssetValue.checksum(of: bytes)
                read[sum] = bytes
                return ["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))]
            default:
                return nil
            }
        })
        assets.merge(read) { a, _ in a }
        return out
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
