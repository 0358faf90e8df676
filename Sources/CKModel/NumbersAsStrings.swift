import CKJSON

/// `numbersAsStrings`, the request option of records/modify, records/query and records/lookup
/// ("whether number fields should be represented by strings"; CloudKit JS sends it so that a
/// 64-bit integer survives JavaScript's doubles): the values of number fields — INT64 and
/// DOUBLE, and their lists — are answered as decimal strings (`"43"`, `"1.5"`) and may be sent
/// as strings. Other values, TIMESTAMP included (milliseconds fit a double exactly), stay as
/// they are.
package enum NumbersAsStrings {
    /// Whether a field of this type is a number field.
    package static func applies(to t: FieldType) -> Bool { t.base == .int64 || t.base == .double }

    /// The value of a field as the answer shows it.
    package static func shown(_ f: RecordField) -> JSONValue {
        guard applies(to: f.type) else { return f.value }
        func text(_ v: JSONValue) -> JSONValue {
            switch v {
            case .int, .double: return .string(JSONWriter.compact(v))
            default: return v
            }
        }
        return f.type.isList ? .array((f.value.arrayValue ?? []).map(text)) : text(f.value)
    }

    /// A number sent as a string (`"43"`, `"-1.5e3"`), as JSON reads it; nil for any other
    /// text, which is then refused as the value it is.
    package static func number(_ s: String) -> JSONValue? {
        guard let v = try? JSONParser.parse(Array(s.utf8)) else { return nil }
        switch v {
        case .int, .double: return v
        default: return nil
        }
    }

    /// `value` (a scalar, or a list's array) with the strings that are numbers read as numbers.
    package static func taken(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return number(s) ?? value
        case .array(let a): return .array(a.map { taken($0) })
        default: return value
        }
    }

    /// A field dictionary `{value, type}` whose `type` is a number type, with its value's
    /// strings read as numbers; any other dictionary as it is.
    package static func taken(fieldDictionary j: JSONValue) -> JSONValue {
        guard var o = j.objectValue, let tag = o["type"]?.stringValue, let t = FieldType(tag: tag), applies(to: t), let v = o["value"] else { return j }
        o["value"] = taken(v)
        return .object(o)
    }
}

extension ResponseStyle {
    /// This style, answering number fields as strings when `on`.
    package func numbersAsStrings(_ on: Bool) -> ResponseStyle {
        var s = self
        s.numbersAsStrings = on
        return s
    }
}
