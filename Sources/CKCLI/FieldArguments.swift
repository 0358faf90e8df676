import CKCore
import Foundation

/// Field values from the command line: `name=value` (type inferred), `name:TYPE=value`, and
/// cktool's `--fields-json`. Asset files (`@path`) are read here and handed to the core, which
/// stores them only if the save succeeds.
struct FieldInput {
    var fields: [String: RecordField?] = [:]
    /// Values given without a type in a JSON field object (they take the field's type on save).
    var untyped: [String: JSONValue] = [:]
    var assets: [String: [UInt8]] = [:]
}

struct FieldArguments {
    let currentDirectory: String
    let command: [String]

    func parse(_ args: [String]) throws -> FieldInput {
        var out = FieldInput()
        for a in args {
            guard let eq = a.firstIndex(of: "=") else {
                throw UsageError("field argument '\(a)' must look like name=value or name:TYPE=value", command: command)
            }
            var name = String(a[..<eq])
            let raw = String(a[a.index(after: eq)...])
            var type: FieldType?
            if let colon = name.firstIndex(of: ":") {
                let tag = String(name[name.index(after: colon)...])
                name = String(name[..<colon])
                guard let t = FieldType(tag: tag.uppercased()), t.base != .unknown else {
                    throw UsageError("unknown field type '\(tag)' in '\(a)'; types: \(FieldType.allTags.joined(separator: ", ")), ASSET", command: command)
                }
                type = t
            }
            try Names.validateFieldName(name)
            if out.fields[name] != nil { throw UsageError("field '\(name)' given more than once", command: command) }
            let t = type ?? Self.infer(raw)
            let value = try convert(raw, type: t, name: name, assets: &out.assets)
            out.fields[name] = .some(RecordField(type: t, value: value))
        }
        return out
    }

    /// Infers a type the way SPEC §4 says: integer → INT64, decimal → DOUBLE, true/false →
    /// INT64, ISO-8601 date or date-time → TIMESTAMP, anything else STRING.
    static func infer(_ raw: String) -> FieldType {
        if raw == "true" || raw == "false" { return FieldType(.int64) }
        if isInteger(raw), Int64(raw) != nil { return FieldType(.int64) }
        if isDecimal(raw) { return FieldType(.double) }
        if Timestamps.parseISO8601(raw) != nil { return FieldType(.timestamp) }
        return FieldType(.string)
    }

    static func isInteger(_ s: String) -> Bool {
        let d = s.hasPrefix("-") ? s.dropFirst() : Substring(s)
        return !d.isEmpty && d.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func isDecimal(_ s: String) -> Bool {
        let d = s.hasPrefix("-") ? s.dropFirst() : Substring(s)
        let parts = d.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return parts.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isNumber } } && Double(s) != nil
    }

    func bad(_ name: String, _ type: FieldType, _ raw: String, _ expected: String) -> CloudKitError {
        CloudKitError.badRequest("field '\(name)' is \(type) but '\(raw)' is not \(expected)")
    }

    /// Converts a command-line value to the canonical JSON of `type`.
    func convert(_ raw: String, type: FieldType, name: String, assets: inout [String: [UInt8]]) throws -> JSONValue {
        if type.isList {
            let t = raw.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("[") {
                let j: JSONValue
                do { j = try JSONParser.parse(t) } catch { throw CloudKitError.badRequest("field '\(name)': list value is not a valid JSON array: \(error)") }
                guard let a = j.arrayValue else { throw CloudKitError.badRequest("field '\(name)' is \(type) but the value is not an array") }
                return .array(try a.enumerated().map { i, e in
                    if let s = e.stringValue { return try convert(s, type: type.element, name: "\(name)[\(i)]", assets: &assets) }
                    return try RecordField.canonical(name: "\(name)[\(i)]", type: type.element, value: e)
                })
            }
            if t.isEmpty { return .array([]) }
            let sep: Character = type.base == .location ? ";" : ","
            return .array(try t.split(separator: sep, omittingEmptySubsequences: false).map {
                try convert(String($0).trimmingCharacters(in: .whitespaces), type: type.element, name: name, assets: &assets)
            })
        }
        switch type.base {
        case .string: return .string(raw)
        case .int64:
            if raw == "true" { return 1 }
            if raw == "false" { return 0 }
            guard Self.isInteger(raw), let i = Int64(raw) else { throw bad(name, type, raw, "a 64-bit integer") }
            return .int(i)
        case .double:
            guard let d = Double(raw), d.isFinite else { throw bad(name, type, raw, "a number") }
            return .double(d)
        case .timestamp:
            if Self.isInteger(raw), let ms = Int64(raw) { return .int(ms) }
            guard let ms = Timestamps.parseISO8601(raw) else { throw bad(name, type, raw, "an ISO-8601 date (2019-10-28 or 2019-10-28T09:30:00Z) or milliseconds") }
            return .int(ms)
        case .bytes, .encryptedBytes:
            if raw.hasPrefix("@") { return .string(Data(try readFile(String(raw.dropFirst()), field: name)).base64EncodedString()) }
            guard Data(base64Encoded: raw) != nil else { throw bad(name, type, raw, "base64 (or @file)") }
            return .string(raw)
        case .reference:
            let parts = raw.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard parts.count <= 2, !parts[0].isEmpty else { throw bad(name, type, raw, "recordName[,NONE|DELETE_SELF|VALIDATE]") }
            try Names.validateRecordName(parts[0])
            var action = Reference.Action.none
            if parts.count == 2 {
                guard let a = Reference.Action(rawValue: parts[1].uppercased()) else { throw bad(name, type, raw, "recordName[,NONE|DELETE_SELF|VALIDATE]") }
                action = a
            }
            return Reference(recordName: parts[0], action: action).json
        case .location:
            let parts = raw.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let lat = parts[0], let lon = parts[1] else { throw bad(name, type, raw, "'latitude,longitude'") }
            return try RecordField.canonical(name: name, type: type, value: ["latitude": .double(lat), "longitude": .double(lon)])
        case .asset:
            guard raw.hasPrefix("@") else { throw bad(name, type, raw, "@FILE (the path of the asset's file)") }
            let bytes = try readFile(String(raw.dropFirst()), field: name)
            let sum = AssetStore.checksum(of: bytes)
            assets[sum] = bytes
            return ["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))]
        case .unknown:
            throw bad(name, type, raw, "a typed value")
        }
    }

    func readFile(_ path: String, field: String) throws -> [UInt8] {
        let p = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        do { return try FileSystem.readUserFile(p, shownAs: path) } catch let e as CloudKitError {
            throw CloudKitError.badRequest("field '\(field)': \(e.reason)")
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
