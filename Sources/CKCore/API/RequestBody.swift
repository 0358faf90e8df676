import CKJSON
import CKModel
import CKStore

/// Reading the JSON bodies of Web Services requests: strict about shapes (a key a request
/// cannot carry, a value of the wrong type, is BAD_REQUEST naming it), as Apple's servers are.
/// What a check names (`records[3]`) is made only for its error: every item of every request
/// passes here.
enum RequestBody {
    /// The body as an object whose keys are among `keys`.
    static func object(_ body: JSONValue, _ what: @autoclosure () -> String, keys: Set<String>) throws -> [String: JSONValue] {
        guard let o = body.objectValue else { throw CloudKitError.badRequest("\(what()) must be a JSON object, got \(body.kindName)") }
        // Sorted only to name the first unknown key the same way every time.
        if o.keys.allSatisfy(keys.contains) { return o }
        for k in o.keys.sorted() where !keys.contains(k) {
            throw CloudKitError.badRequest("unknown key '\(Names.describe(k))' in \(what())")
        }
        return o
    }

    /// The same, for the keys a literal lists (every request body passes here): compared
    /// in the list, with no Set built and hashed per call.
    static func object(_ body: JSONValue, _ what: @autoclosure () -> String, keys: [String]) throws -> [String: JSONValue] {
        if let o = body.objectValue, o.keys.allSatisfy(keys.contains) { return o }
        return try object(body, what(), keys: Set(keys))
    }

    /// The zone a `zoneID` names (nil when absent or null).
    static func zoneName(_ v: JSONValue?) throws -> String? {
        guard let z = v, !z.isNull else { return nil }
        let id = try ZoneID(json: z)
        try Names.validateZoneName(id.zoneName)
        return id.zoneName
    }

    /// A zone ID dictionary that must be there: `{zoneName, ownerRecordName?, zoneType?}`, the
    /// name checked.
    static func zoneID(_ v: JSONValue, _ what: @autoclosure () -> String) throws -> ZoneID {
        _ = try object(v, what(), keys: ["zoneName", "ownerRecordName", "zoneType"])
        if let o = v["ownerRecordName"], !o.isNull, o.stringValue == nil { throw CloudKitError.badRequest("\(what()).ownerRecordName must be a string") }
        let id: ZoneID
        do { id = try ZoneID(json: v) } catch let e as CloudKitError { throw CloudKitError.badRequest("\(what()): \(e.reason)") }
        try Names.validateZoneName(id.zoneName)
        return id
    }

    /// An optional true/false member.
    static func bool(_ v: JSONValue?, _ what: @autoclosure () -> String) throws -> Bool? {
        guard let x = v, !x.isNull else { return nil }
        guard let b = x.boolValue else { throw CloudKitError.badRequest("\(what()) must be true or false, got \(x.kindName)") }
        return b
    }

    /// A list member that must be there: an array of at most the items a request holds
    /// (`Limits.checkItems`).
    static func array(_ v: JSONValue?, _ what: @autoclosure () -> String) throws -> [JSONValue] {
        guard let x = v, !x.isNull else { throw CloudKitError.badRequest("\(what()) is missing: it must be an array") }
        guard let a = x.arrayValue else { throw CloudKitError.badRequest("\(what()) must be an array, got \(x.kindName)") }
        try Limits.checkItems(a.count)
        return a
    }

    /// `desiredKeys`: field names (nil when absent or null).
    static func desiredKeys(_ v: JSONValue?) throws -> Set<String>? {
        guard let d = v, !d.isNull else { return nil }
        guard let a = d.arrayValue, a.allSatisfy({ $0.stringValue != nil }) else { throw CloudKitError.badRequest("desiredKeys must be an array of field names") }
        return Set(a.compactMap(\.stringValue))
    }

    /// An optional string member.
    static func string(_ v: JSONValue?, _ what: @autoclosure () -> String) throws -> String? {
        guard let x = v, !x.isNull else { return nil }
        guard let s = x.stringValue else { throw CloudKitError.badRequest("\(what()) must be a string, got \(x.kindName)") }
        return s
    }

    /// An optional positive integer member, at most `max`.
    static func count(_ v: JSONValue?, _ what: @autoclosure () -> String, max: Int) throws -> Int? {
        guard let x = v, !x.isNull else { return nil }
        guard let n = x.int64Value, n >= 1, n <= Int64(max) else { throw CloudKitError.badRequest("\(what()) must be an integer from 1 to \(max)") }
        return Int(n)
    }
}
