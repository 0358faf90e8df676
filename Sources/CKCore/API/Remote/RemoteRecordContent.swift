import CKJSON
import CKModel

/// What makes two versions of a record the same data, whichever side they come from: the
/// type, the parent and each field's value — not the change tag, the timestamps or the users,
/// which each side assigns itself. An asset is its checksum and size (the URLs differ); a
/// reference its target and action (a zoneID may be spelled out or not); a list's type name
/// is left out (a read of real CloudKit answers a bare `LIST`).
enum RemoteRecordContent {
    static func of(_ record: JSONValue?) -> JSONValue? {
        guard let r = record, r["deleted"]?.boolValue != true else { return nil }
        var fields: [String: JSONValue] = [:]
        for (name, f) in r["fields"]?.objectValue ?? [:] {
            let type = f["type"]?.stringValue ?? ""
            fields[name] = canonical(f["value"] ?? .null, type: type)
        }
        var o: [String: JSONValue] = ["recordType": r["recordType"] ?? .null, "fields": .object(fields)]
        if let p = r["parent"]?["recordName"]?.stringValue ?? r["parent"]?.stringValue { o["parent"] = .string(p) }
        return .object(o)
    }

    static func canonical(_ v: JSONValue, type: String) -> JSONValue {
        if let a = v.arrayValue { return .array(a.map { canonical($0, type: type) }) }
        if let o = v.objectValue {
            if type.hasPrefix("ASSET") || o["fileChecksum"] != nil {
                return .object(["fileChecksum": o["fileChecksum"] ?? .null, "size": o["size"] ?? .null])
            }
            if type.hasPrefix("REFERENCE") || (o["recordName"] != nil && o["action"] != nil) {
                return .object(["recordName": o["recordName"] ?? .null, "action": o["action"] ?? "NONE"])
            }
            return v
        }
        // A DOUBLE that holds a whole number may come back as an integer.
        if type.hasPrefix("DOUBLE"), let d = v.doubleValue { return .double(d) }
        return v
    }

    static func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool { of(a) == of(b) }
}
