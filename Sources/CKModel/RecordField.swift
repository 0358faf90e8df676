import CKJSON
import Foundation

/// One typed field value in canonical Web Services form: `{value, type}`.
public struct RecordField: Equatable, Sendable {
    public var type: FieldType
    public var value: JSONValue

    public init(type: FieldType, value: JSONValue) {
        self.type = type
        self.value = value
    }

    public var json: JSONValue { ["type": .string(type.rawValue), "value": value] }

    /// BAD_REQUEST for a TIMESTAMP (or an element of a TIMESTAMP_LIST) outside
    /// `Timestamps.range`: a field built in memory (a command's field argument) reaches the
    /// save without `parse`, which checks the same.
    package func checkRange(name: String) throws {
        guard type.base == .timestamp else { return }
        for v in type.isList ? value.arrayValue ?? [] : [value] {
            if let ms = v.int64Value { try Timestamps.check(ms, field: name) }
        }
    }

    /// The bytes the value takes against CloudKit's 1 MB record limit ("Assets don't count"):
    /// a BYTES value its decoded bytes (not its base64), a string its UTF-8, a number or a
    /// date 8 bytes, a reference or a location its JSON; a list the sum of its elements.
    public var storedSize: Int {
        func size(_ v: JSONValue, _ base: FieldType.Base) -> Int {
            switch base {
            case .asset: return 0
            case .string: return v.stringValue?.utf8.count ?? JSONWriter.compact(v).utf8.count
            case .bytes, .encryptedBytes: return v.stringValue.map(RecordField.base64DecodedCount) ?? 0
            case .int64, .double, .timestamp: return 8
            case .reference, .location, .unknown: return JSONWriter.compact(v).utf8.count
            }
        }
        if type.isList { return (value.arrayValue ?? []).reduce(0) { $0 + size($1, type.base) } }
        return size(value, type.base)
    }

    /// How many bytes base64 text decodes to, counted without decoding it.
    package static func base64DecodedCount(_ s: String) -> Int {
        let n = s.utf8.count
        var pad = 0
        for c in s.utf8.reversed().prefix(2) where c == UInt8(ascii: "=") { pad += 1 }
        return n / 4 * 3 + [0, 0, 1, 2][n % 4] - pad
    }

    /// Validates a Web Services field dictionary `{value, type?}` and returns it in canonical
    /// form, or nil when the value is null (which clears the field).
    public static func parse(name: String, json: JSONValue) throws -> RecordField? {
        guard let (tag, value) = try shape(name: name, json: json) else { return nil }
        return try typed(name: name, tag: tag, value: value)
    }

    /// The dictionary's shape — an object of `value` and an optional string `type` — as its
    /// `type` tag and value (nil when the value is null). A malformed one is refused whole.
    package static func shape(name: String, json: JSONValue) throws -> (tag: String?, value: JSONValue)? {
        guard let o = json.objectValue else {
            throw CloudKitError.badRequest("field '\(name)' must be an object {\"value\": …, \"type\": …}, got \(json.kindName)")
        }
        for k in o.keys where k != "value" && k != "type" && k != "isEncrypted" {
            throw CloudKitError.badRequest("field '\(name)' has unknown key '\(k)'")
        }
        guard let value = o["value"] else { throw CloudKitError.badRequest("field '\(name)' has no 'value'") }
        if value.isNull { return nil }
        guard let t = o["type"] else { return (nil, value) }
        guard let s = t.stringValue else { throw CloudKitError.badRequest("field '\(name)': type must be a string") }
        return (s, value)
    }

    /// A value with its `type` tag (inferred when there is none), in canonical form; BAD_REQUEST
    /// when the tag is unknown or the value does not fit it (a value error: CloudKit fails the
    /// record it is in, not the request: `RecordOperation.invalid`).
    package static func typed(name: String, tag: String?, value: JSONValue) throws -> RecordField {
        var type: FieldType
        if let s = tag {
            guard let ft = FieldType(tag: s) else {
                throw CloudKitError.badRequest("field '\(name)': unknown type '\(s)' (expected one of \(FieldType.allTags.joined(separator: ", ")))")
            }
            type = ft
        } else {
            type = try infer(name: name, value: value)
        }
        do {
            return RecordField(type: type, value: try canonical(name: name, type: type, value: value))
        } catch let e as CloudKitError where e.code == .badRequest {
            // In CloudKit's words (recorded: "Invalid value, expected type TIMESTAMP."), then ck's.
            throw CloudKitError.badRequest("Invalid value, expected type \(type.rawValue): \(e.reason)")
        }
    }

    /// The value of a field dictionary sent without `type` (nil when it has a type, or clears
    /// the field with a null value).
    public static func untypedValue(_ json: JSONValue) -> JSONValue? {
        guard let o = json.objectValue, o["type"] == nil || o["type"]!.isNull, let v = o["value"], !v.isNull else { return nil }
        return v
    }

    /// The type of a typeless value that could not be inferred, until the field's type (from
    /// the schema or the record) is known; never stored.
    public static let uninferred = FieldType(.unknown)

    /// Infers a type tag for an untyped Web Services value, for a field neither the schema nor
    /// the record knows (otherwise the value takes the field's type when saved).
    package static func infer(name: String, value: JSONValue) throws -> FieldType {
        switch value {
        case .string: return FieldType(.string)
        case .int, .bool: return FieldType(.int64)
        case .double: return FieldType(.double)
        case .object(let o):
            if o["recordName"] != nil { return FieldType(.reference) }
            if o["latitude"] != nil { return FieldType(.location) }
            if o["fileChecksum"] != nil { return FieldType(.asset) }
            throw CloudKitError.badRequest("field '\(name)': cannot infer the type of an object value; give a 'type'")
        case .array(let a):
            guard let first = a.first else { return FieldType(.unknown, list: true) }
            let t = try infer(name: name, value: first)
            // Whole and fractional numbers together are a DOUBLE_LIST.
            if t.base == .int64, a.contains(where: { if case .double = $0 { return true }; return false }) { return FieldType(.double, list: true) }
            return FieldType(t.base, list: true)
        case .null:
            throw CloudKitError.badRequest("field '\(name)': null value")
        }
    }

    /// Checks that `value` fits `type` and returns its canonical encoding.
    public static func canonical(name: String, type: FieldType, value: JSONValue) throws -> JSONValue {
        if type.isList {
            guard let a = value.arrayValue else {
                throw CloudKitError.badRequest("field '\(name)' is \(type) but the value is \(value.kindName), not an array")
            }
            if type.base == .unknown {
                guard a.isEmpty else { throw CloudKitError.badRequest("field '\(name)': UNKNOWN_LIST must be empty") }
                return .array([])
            }
            return .array(try a.enumerated().map { (i, e) in
                try canonical(name: "\(name)[\(i)]", type: type.element, value: e)
            })
        }
        func wrong(_ expected: String) -> CloudKitError {
            CloudKitError.badRequest("field '\(name)' is \(type) but the value is \(value.kindName) (\(expected) expected)")
        }
        switch type.base {
        case .string:
            guard case .string = value else { throw wrong("a string") }
            return value
        case .int64:
            if case .bool(let b) = value { return .int(b ? 1 : 0) }
            guard let i = value.int64Value else { throw wrong("an integer") }
            return .int(i)
        case .double:
            guard let d = value.doubleValue else { throw wrong("a number") }
            return .double(d)
        case .timestamp:
            guard let i = value.int64Value else { throw wrong("milliseconds since 1970 as an integer") }
            try Timestamps.check(i, field: name)
            return .int(i)
        case .bytes, .encryptedBytes:
            guard let s = value.stringValue else { throw wrong("a base64 string") }
            guard Data(base64Encoded: s) != nil else { throw CloudKitError.badRequest("field '\(name)' is \(type) but the value is not valid base64") }
            return value
        case .reference:
            return try Reference.parse(name: name, json: value).json
        case .location:
            return try Location.parse(name: name, json: value)
        case .asset:
            return try AssetValue.canonical(name: name, value: value)
        case .unknown:
            throw CloudKitError.badRequest("field '\(name)': UNKNOWN is only valid as UNKNOWN_LIST")
        }
    }
}

/// A reference value `{recordName, action, zoneID?}`.
public struct Reference: Equatable, Sendable {
    public enum Action: String, Sendable, CaseIterable { case none = "NONE", deleteSelf = "DELETE_SELF", validate = "VALIDATE" }
    public var recordName: String
    public var action: Action
    /// The zone named by the value, if it named one.
    public var zoneName: String?
    /// The whole zoneID, once the server has filled it in (every stored reference has one).
    public var zoneID: ZoneID?

    public init(recordName: String, action: Action, zoneName: String? = nil, zoneID: ZoneID? = nil) {
        self.recordName = recordName
        self.action = action
        self.zoneName = zoneName ?? zoneID?.zoneName
        self.zoneID = zoneID
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["recordName": .string(recordName), "action": .string(action.rawValue)]
        if let z = zoneID { o["zoneID"] = z.json } else if let z = zoneName { o["zoneID"] = ["zoneName": .string(z)] }
        return .object(o)
    }

    public static func parse(name: String, json: JSONValue) throws -> Reference {
        guard let o = json.objectValue else {
            throw CloudKitError.badRequest("field '\(name)' is REFERENCE but the value is \(json.kindName) (a reference dictionary expected)")
        }
        guard let rn = o["recordName"]?.stringValue else {
            throw CloudKitError.badRequest("field '\(name)': a reference needs a string 'recordName'")
        }
        try Names.validateRecordName(rn)
        var action = Action.none
        if let a = o["action"], !a.isNull {
            guard let s = a.stringValue, let act = Action(rawValue: s) else {
                throw CloudKitError.badRequest("field '\(name)': reference action must be NONE, DELETE_SELF or VALIDATE")
            }
            action = act
        }
        var zone: ZoneID?
        if let z = o["zoneID"], !z.isNull {
            zone = try ZoneID(json: z)
            try Names.validateZoneName(zone!.zoneName)
        }
        return Reference(recordName: rn, action: action, zoneName: zone?.zoneName, zoneID: zone.flatMap { z in
            // A zoneID as the server sends it (with its owner) is kept whole; a bare zone name is filled in on save.
            (o["zoneID"]?["ownerRecordName"]?.stringValue != nil) ? z : nil
        })
    }

    /// Every reference in a field (one, or each element of a REFERENCE_LIST).
    public static func all(in field: RecordField) -> [Reference] {
        guard field.type.base == .reference else { return [] }
        let values = field.type.isList ? (field.value.arrayValue ?? []) : [field.value]
        return values.compactMap { try? parse(name: "", json: $0) }
    }
}

/// A location value; latitude and longitude are required.
package enum Location {
    package static let keys: Set<String> = ["latitude", "longitude", "horizontalAccuracy", "verticalAccuracy", "altitude", "speed", "course", "timestamp"]

    package static func parse(name: String, json: JSONValue) throws -> JSONValue {
        guard let o = json.objectValue else {
            throw CloudKitError.badRequest("field '\(name)' is LOCATION but the value is \(json.kindName) (a location dictionary expected)")
        }
        var out: [String: JSONValue] = [:]
        for (k, v) in o {
            guard keys.contains(k) else { throw CloudKitError.badRequest("field '\(name)': unknown location key '\(k)'") }
            guard let d = v.doubleValue else { throw CloudKitError.badRequest("field '\(name)': location '\(k)' must be a number") }
            if k == "timestamp" {
                // Milliseconds since 1970, whole and within range: Int64(d) would trap beyond ±2^63.
                guard d.isFinite, d.rounded(.towardZero) == d, Double(Timestamps.range.lowerBound) <= d, d <= Double(Timestamps.range.upperBound) else {
                    throw CloudKitError.badRequest("field '\(name)': location 'timestamp' must be whole milliseconds since 1970 within \(Timestamps.rangeDescription)")
                }
                out[k] = .int(Int64(d))
            } else {
                out[k] = .double(d)
            }
        }
        guard let lat = out["latitude"]?.doubleValue, let lon = out["longitude"]?.doubleValue else {
            throw CloudKitError.badRequest("field '\(name)': a location needs 'latitude' and 'longitude'")
        }
        guard (-90...90).contains(lat), (-180...180).contains(lon) else {
            throw CloudKitError.badRequest("field '\(name)': latitude must be within ±90 and longitude within ±180")
        }
        return .object(out)
    }
}
