import CKJSON

/// Who wrote a record, when, from which device (`created` / `modified`).
public struct ChangeStamp: Equatable, Sendable {
    public var timestamp: Int64
    public var userRecordName: String
    public var deviceID: String

    public init(timestamp: Int64, userRecordName: String, deviceID: String) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
        self.deviceID = deviceID
    }

    public var json: JSONValue {
        ["timestamp": .int(timestamp), "userRecordName": .string(userRecordName), "deviceID": .string(deviceID)]
    }

    package init(json: JSONValue?) throws {
        guard let o = json?.objectValue, let t = o["timestamp"]?.int64Value,
              let u = o["userRecordName"]?.stringValue, let d = o["deviceID"]?.stringValue
        else { throw CloudKitError.internalError("stored record has a malformed change stamp") }
        self.init(timestamp: t, userRecordName: u, deviceID: d)
    }
}

/// How a response shows records (Web Services shapes, reference §1.2 and Docs/wire.md).
public struct ResponseStyle: Sendable {
    /// `file://` URL of the asset store, or `ck serve`'s `/assets/`: asset values gain
    /// `downloadURL` under it.
    public var assetBase: String
    /// Private and shared databases encrypt assets: their values carry `wrappingKey` and
    /// `referenceChecksum`, as the service sends them there.
    public var encryptedAssets: Bool
    /// Over HTTP: signs each `downloadURL` for the reader the answer is for, with an expiry.
    public var assetURLs: AssetURLSigner?
    /// `numbersAsStrings`: INT64 and DOUBLE values (and their lists) as strings (NumbersAsStrings).
    public var numbersAsStrings = false
    /// Who reads the answer, which decides what its error dictionaries carry.
    public var audience: Audience

    /// Who reads an answer.
    public enum Audience: Sendable {
        /// A person or script reading ck's output: error dictionaries carry the native
        /// `CKError.Code` too, `ckErrorCode`.
        case commandLine
        /// A client of Web Services over HTTP: error dictionaries as Apple's servers send them,
        /// without `ckErrorCode` — CloudKit JS takes one it finds over the code it derives from
        /// `serverErrorCode` (a CONFLICT would reach the page as 14).
        case wire
    }

    public init(assetBase: String, encryptedAssets: Bool, assetURLs: AssetURLSigner? = nil, audience: Audience = .commandLine) {
        self.assetBase = assetBase
        self.encryptedAssets = encryptedAssets
        self.assetURLs = assetURLs
        self.audience = audience
    }
}

/// A record as Web Services shows it.
public struct Record: Equatable, Sendable {
    public var recordName: String
    public var recordType: String
    public var recordChangeTag: String
    public var fields: [String: RecordField]
    public var created: ChangeStamp
    public var modified: ChangeStamp
    public var zoneID: ZoneID
    /// The `parent` reference used by sharing hierarchies.
    public var parent: String?
    /// The short GUID a share link is built from, made when a save asks `createShortGUID`.
    public var shortGUID: String?
    /// `share`: the share record (`cloudkit.share`) a hierarchy's root record belongs to.
    public var share: String?
    /// A share record's own keys (`publicPermission`, `participants`, `owner`, and the root's
    /// name), stored and shown at the record's top level (Sharing/Share.swift).
    public var shareInfo: [String: JSONValue]?

    public init(recordName: String, recordType: String, recordChangeTag: String, fields: [String: RecordField],
                created: ChangeStamp, modified: ChangeStamp, zoneID: ZoneID, parent: String? = nil, shortGUID: String? = nil) {
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.created = created
        self.modified = modified
        self.zoneID = zoneID
        self.parent = parent
        self.shortGUID = shortGUID
    }

    /// The record dictionary as the store keeps it (record files, history entries).
    public func json() -> JSONValue {
        var o: [String: JSONValue] = [
            "recordName": .string(recordName),
            "recordType": .string(recordType),
            "recordChangeTag": .string(recordChangeTag),
            "fields": .object(fields.mapValues(\.json)),
            "created": created.json,
            "modified": modified.json,
            "deleted": false,
            "zoneID": zoneID.json,
        ]
        if let p = parent { o["parent"] = ["recordName": .string(p)] }
        if let g = shortGUID { o["shortGUID"] = .string(g) }
        if let s = share { o["share"] = ["recordName": .string(s)] }
        for (k, v) in shareInfo ?? [:] { o[k] = v }
        return .object(o)
    }

    /// The record dictionary of a response, as recorded from Apple's servers: the stored keys
    /// plus `pluginFields: {}`; asset values with their `downloadURL` (and, in private and
    /// shared databases, `wrappingKey` and `referenceChecksum`). `desiredKeys` limits the
    /// fields shown (`fields` stays, possibly empty). records/modify responses carry no
    /// `zoneID` (`withZoneID: false`).
    public func response(_ style: ResponseStyle, desiredKeys: Set<String>? = nil, withZoneID: Bool = true) -> JSONValue {
        var f: [String: JSONValue] = [:]
        for (k, v) in fields where desiredKeys?.contains(k) ?? true {
            var field = v
            if v.type.base == .asset { field.value = AssetValue.response(v.value, style: style) }
            if style.numbersAsStrings, NumbersAsStrings.applies(to: v.type) { field.value = NumbersAsStrings.shown(v) }
            f[k] = field.json
        }
        guard case .object(var o) = json() else { return json() }
        o["fields"] = .object(f)
        o["pluginFields"] = .object([:])
        if !withZoneID { o["zoneID"] = nil }
        for k in ShareInfo.storedOnlyKeys { o[k] = nil }
        // A record's `share` names the share it is in ("a reference to the shared object for
        // this record", CloudKit JS): a share's is itself, as Apple's answer to its creation has it.
        if shareInfo != nil && o["share"] == nil { o["share"] = ["recordName": .string(recordName)] }
        return .object(o)
    }

    /// A tombstone as change feeds (with the zoneID) and modify responses (without) show a
    /// deletion: `{recordName, deleted: true[, zoneID]}`.
    public static func tombstone(recordName: String, zoneID: ZoneID?) -> JSONValue {
        var o: [String: JSONValue] = ["recordName": .string(recordName), "deleted": true]
        if let z = zoneID { o["zoneID"] = z.json }
        return .object(o)
    }

    /// Reads a stored record dictionary back.
    public init(stored json: JSONValue) throws {
        guard let o = json.objectValue,
              let name = o["recordName"]?.stringValue, let type = o["recordType"]?.stringValue,
              let tag = o["recordChangeTag"]?.stringValue, let fj = o["fields"]?.objectValue, let z = o["zoneID"]
        else { throw CloudKitError.internalError("stored record is malformed") }
        func field(_ v: JSONValue) -> RecordField? {
            guard let t = v["type"]?.stringValue, let ft = FieldType(tag: t), let val = v["value"] else { return nil }
            return RecordField(type: ft, value: val)
        }
        var fields: [String: RecordField] = [:]
        for (k, v) in fj {
            guard let f = field(v) else {
                // The first malformed field in byte order, so that every read of the file names
                // the same one (a dictionary's order changes from process to process).
                let named = fj.keys.filter { field(fj[$0]!) == nil }.min { $0.byteOrder($1) < 0 } ?? k
                throw CloudKitError.internalError("stored record '\(name)' has a malformed field '\(named)'")
            }
            fields[k] = f
        }
        self.init(recordName: name, recordType: type, recordChangeTag: tag, fields: fields,
                  created: try ChangeStamp(json: o["created"]), modified: try ChangeStamp(json: o["modified"]),
                  zoneID: try ZoneID(json: z), parent: o["parent"]?["recordName"]?.stringValue, shortGUID: o["shortGUID"]?.stringValue)
        share = o["share"]?["recordName"]?.stringValue
        if type == ShareInfo.recordType { shareInfo = o.filter { ShareInfo.keys.contains($0.key) } }
    }

    /// Every outgoing reference, with the field it sits in.
    public var references: [(field: String, reference: Reference)] {
        var out: [(String, Reference)] = []
        for k in fields.keys.sorted() {
            for r in Reference.all(in: fields[k]!) { out.append((k, r)) }
        }
        return out
    }

    /// Bytes the record stores, not counting assets (CloudKit's 1 MB limit applies to this).
    public var storedSize: Int {
        var n = recordName.utf8.count + recordType.utf8.count
        for (k, v) in fields { n += k.utf8.count + v.storedSize }
        return n
    }
}
