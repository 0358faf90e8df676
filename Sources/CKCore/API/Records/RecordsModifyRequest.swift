import CKJSON
import CKModel
import CKStore

/// A parsed Web Services `records/modify` request.
public struct ModifyRequest: Sendable {
    public var operations: [RecordOperation]
    public var atomic: Bool
    /// Whether the request said `atomic` itself (rather than taking the default).
    public var atomicGiven = false
    public var zoneName: String?
    public var desiredKeys: Set<String>?
    /// `numbersAsStrings`: number fields answered as strings, and taken as strings
    /// (NumbersAsStrings); an operation may say otherwise for itself (`itemOptions`).
    public var numbersAsStrings = false
    /// By index: an operation's own `desiredKeys` and `numbersAsStrings` (CloudKit JS sends
    /// them inside each operation), over the request's.
    public var itemOptions: [Int: ItemOptions] = [:]
    /// Asset bytes sent with the request, by checksum: ck's stand-in for `assets/upload` (a
    /// field argument `@file`, an asset copied from another data directory).
    public var uploadedAssets: [String: [UInt8]] = [:]
    /// Whether an asset may bring its bytes from the `file://` downloadURL of another ck data
    /// directory on this machine (ExportedAssets): for the CLI's saves of records copied from
    /// ck's output, never for a request that came over the network.
    public var takesExportedAssets = false

    public init(operations: [RecordOperation], atomic: Bool = true, zoneName: String? = nil, desiredKeys: Set<String>? = nil) {
        self.operations = operations
        self.atomic = atomic
        self.zoneName = zoneName
        self.desiredKeys = desiredKeys
    }

    /// Keys a record dictionary may carry: the request keys.
    static let recordKeys: Set<String> = [
        "recordName", "recordType", "recordChangeTag", "fields", "parent", "createShortGUID", "zoneID",
    ]
    /// Keys only the server sends (Apple's reference, CloudKit JS, and records recorded from
    /// Apple's servers — Tests/Fixtures/wire): a record copied from a real response is
    /// accepted as it is and these are ignored, whatever their values. Sharing keys
    /// (`share`, `participants`, …) belong to share records, made with `ck share`.
    static let serverKeys: Set<String> = [
        "created", "modified", "deleted", "shortGUID", "pluginFields", "expirationTime", "stableUrl",
        "displayedHostname", "chainProtectionInfo", "share", "publicPermission", "participants", "owner",
        "currentUserParticipant", "forRecord", "otherSystemFields", "zone", "shortGuid",
    ]

    public static func parse(_ body: JSONValue) throws -> ModifyRequest {
        guard let o = body.objectValue else { throw CloudKitError.badRequest("modify request must be a JSON object, got \(body.kindName)") }
        for k in o.keys where !["operations", "atomic", "zoneID", "desiredKeys", "numbersAsStrings"].contains(k) {
            throw CloudKitError.badRequest("unknown key '\(k)' in modify request")
        }
        guard let opsJSON = o["operations"]?.arrayValue else { throw CloudKitError.badRequest("modify request needs an 'operations' array") }
        try Limits.checkItems(opsJSON.count)
        var req = ModifyRequest(operations: [], atomic: true, zoneName: nil, desiredKeys: nil)
        if let a = o["atomic"], !a.isNull {
            guard let b = a.boolValue else { throw CloudKitError.badRequest("'atomic' must be true or false") }
            req.atomic = b
            req.atomicGiven = true
        }
        if let z = o["zoneID"], !z.isNull {
            let zid = try ZoneID(json: z)
            try Names.validateZoneName(zid.zoneName)
            req.zoneName = zid.zoneName
        }
        req.desiredKeys = try RequestBody.desiredKeys(o["desiredKeys"])
        req.numbersAsStrings = try RequestBody.bool(o["numbersAsStrings"], "numbersAsStrings") ?? false
        var seen = Set<NameKey>()
        for (i, op) in opsJSON.enumerated() {
            guard let oo = op.objectValue else { throw CloudKitError.badRequest("operations[\(i)] must be an object") }
            for k in oo.keys where !["operationType", "record", "desiredKeys", "numbersAsStrings"].contains(k) {
                throw CloudKitError.badRequest("operations[\(i)]: unknown key '\(k)'")
            }
            guard let ts = oo["operationType"]?.stringValue, let type = RecordOperationType(rawValue: ts) else {
                throw CloudKitError.badRequest("operations[\(i)]: operationType must be one of \(RecordOperationType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard var rec = oo["record"] else { throw CloudKitError.badRequest("operations[\(i)] needs a 'record'") }
            let options = try ItemOptions.parse(oo)
            req.itemOptions[i] = options
            let numbersAsStrings = options?.numbersAsStrings ?? req.numbersAsStrings
            if numbersAsStrings, var r = rec.objectValue, let f = r["fields"]?.objectValue {
                r["fields"] = .object(f.mapValues(NumbersAsStrings.taken(fieldDictionary:)))
                rec = .object(r)
            }
            // A value that does not fit its type fails this operation alone, as CloudKit answers.
            var parsed = try parseRecord(rec, type: type, context: "operations[\(i)]", deferringValueErrors: true)
            parsed.numbersAsStrings = numbersAsStrings
            // Refused whole, before anything is tried, as Apple's servers do (recorded reason).
            if type.checksTag && parsed.recordChangeTag == nil {
                throw CloudKitError(.badRequest, "BadRequestException: missing required field 'recordChangeTag' (operations[\(i)]: \(type.rawValue) of record '\(Names.describe(parsed.recordName ?? ""))')", recordName: parsed.recordName)
            }
            if let n = parsed.recordName {
                // One operation per record, as Web Services requires.
                if !seen.insert(NameKey(n)).inserted { throw CloudKitError(.badRequest, "operations[\(i)]: record '\(n)' appears in more than one operation", recordName: n) }
            }
            req.operations.append(parsed)
        }
        return req
    }

    /// The zone a request applies to: its own zoneID, else `fallback` (the --zone option).
    /// `atomic: true` said in so many words is refused whole in a default zone, where CloudKit
    /// has no atomic batches (when `atomic` is left out, a default-zone batch is not atomic).
    public func zone(fallback: String) throws -> String {
        let zone = zoneName ?? fallback
        if atomicGiven && atomic && zone.utf8.elementsEqual(ZoneID.defaultZoneName.utf8) {
            throw CloudKitError.badRequest("atomic operations not supported in default zone")
        }
        // A request applies to one zone: a record that names another is refused whole, never
        // written into the request's zone instead.
        for (i, op) in operations.enumerated() {
            if let z = op.zoneName, !z.utf8.elementsEqual(zone.utf8) {
                throw CloudKitError(.badRequest, "operations[\(i)]: record '\(Names.describe(op.recordName ?? ""))' names zone '\(Names.describe(z))' but the request is for zone '\(Names.describe(zone))' (one zone per records/modify request)", recordName: op.recordName)
            }
        }
        return zone
    }

    /// Parses one Web Services record dictionary into an operation of the given type.
    /// `deferringValueErrors`: a field value that does not fit its type (`"43"` as INT64, a
    /// fractional TIMESTAMP, an unknown type tag) becomes the operation's `invalid` error, which
    /// fails it alone when it runs (records/modify); otherwise it is thrown. A malformed record
    /// is thrown either way. `context` (`operations[3]`) is made only for an error.
    public static func parseRecord(_ j: JSONValue, type: RecordOperationType, context: @autoclosure () -> String = "record",
                                   deferringValueErrors: Bool = false) throws -> RecordOperation {
        guard let r = j.objectValue else { throw CloudKitError.badRequest("\(context()): record must be an object, got \(j.kindName)") }
        for k in r.keys where !recordKeys.contains(k) && !serverKeys.contains(k) {
            throw CloudKitError.badRequest("\(context()): unknown record key '\(k)'")
        }
        var op = RecordOperation(type: type)
        if let n = r["recordName"], !n.isNull {
            guard let s = n.stringValue else { throw CloudKitError.badRequest("\(context()): recordName must be a string") }
            try Names.validateRecordName(s)
            op.recordName = s
        }
        // An update, replace or delete names the record it changes (a create or a force
        // save may leave the name to the server).
        if (type == .update || type == .replace || type.isDelete) && op.recordName == nil { throw CloudKitError.badRequest("\(context()): \(type.rawValue) needs a recordName") }
        if let t = r["recordType"], !t.isNull {
            guard let s = t.stringValue else { throw CloudKitError.badRequest("\(context()): recordType must be a string") }
            // A share create, as Web Services sends it (Sharing/ShareRequest.swift).
            if s == ShareInfo.recordType { op.recordType = s; op.share = try parseShare(r, type: type, context: context()) } else {
                try Names.validateRecordType(s)
                op.recordType = s
            }
        }
        if let t = r["recordChangeTag"], !t.isNull {
            guard let s = t.stringValue else { throw CloudKitError.badRequest("\(context()): recordChangeTag must be a string") }
            // An empty tag is no tag (refused as missing where one is required).
            if !s.isEmpty { op.recordChangeTag = s }
        }
        if let f = r["fields"], !f.isNull {
            guard let fo = f.objectValue else { throw CloudKitError.badRequest("\(context()): fields must be an object, got \(f.kindName)") }
            var invalidField: String?
            for (k, v) in fo {
                if op.share != nil && k == ShareInfo.titleField { continue }
                try Names.validateFieldName(k)
                if let raw = RecordField.untypedValue(v) {
                    op.untyped[k] = raw
                    // A typeless value whose type cannot be inferred still has one if the schema
                    // (or the record) gives its field a type; else that record alone fails.
                    do { op.fields[k] = .some(try RecordField.parse(name: k, json: v)) } catch let e as CloudKitError {
                        // Nested lists are no field's value: malformed, refused whole.
                        if raw.arrayValue?.contains(where: { $0.arrayValue != nil }) == true { throw e }
                        op.fields[k] = .some(RecordField(type: RecordField.uninferred, value: raw))
                    }
                } else if let (tag, value) = try RecordField.shape(name: k, json: v) {
                    do { op.fields[k] = .some(try RecordField.typed(name: k, tag: tag, value: value)) } catch let e as CloudKitError where deferringValueErrors && e.code == .badRequest {
                        // The first field by its name's bytes: the same one is reported every time.
                        if invalidField.map({ k.utf8.lexicographicallyPrecedes($0.utf8) }) ?? true {
                            invalidField = k
                            op.invalid = CloudKitError(.badRequest, e.reason, recordName: op.recordName)
                        }
                    }
                } else {
                    op.fields[k] = .some(nil)
                }
            }
        }
        if let z = r["zoneID"], !z.isNull {
            let zid = try ZoneID(json: z)
            try Names.validateZoneName(zid.zoneName)
            op.zoneName = zid.zoneName
        }
        if let g = r["createShortGUID"], !g.isNull {
            guard let b = g.boolValue else { throw CloudKitError.badRequest("\(context()): createShortGUID must be true or false") }
            op.createShortGUID = b
        }
        if let p = r["parent"], p.isNull {
            // null takes the parent away; a key left out keeps it.
            op.clearsParent = true
        } else if let p = r["parent"] {
            guard let n = p["recordName"]?.stringValue else { throw CloudKitError.badRequest("\(context()): parent must be {\"recordName\": …}") }
            try Names.validateRecordName(n)
            op.parent = n
        }
        return op
    }
}
