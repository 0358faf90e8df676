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

    init(json: JSONValue?) throws {
        guard let o = json?.objectValue, let t = o["timestamp"]?.int64Value,
              let u = o["userRecordName"]?.stringValue, let d = o["deviceID"]?.stringValue
        else { throw CloudKitError.internalError("stored record has a malformed change stamp") }
        self.init(timestamp: t, userRecordName: u, deviceID: d)
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

    public init(recordName: String, recordType: String, recordChangeTag: String, fields: [String: RecordField],
                created: ChangeStamp, modified: ChangeStamp, zoneID: ZoneID, parent: String? = nil) {
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.created = created
        self.modified = modified
        self.zoneID = zoneID
        self.parent = parent
    }

    /// The Web Services record dictionary. With `assetBase` (a `file://` URL of the asset
    /// store), asset values gain their `downloadURL`. `desiredKeys` limits the fields shown.
    public func json(assetBase: String? = nil, desiredKeys: Set<String>? = nil) -> JSONValue {
        var f: [String: JSONValue] = [:]
        for (k, v) in fields where desiredKeys?.contains(k) ?? true {
            var field = v
            if let base = assetBase, v.type.base == .asset { field.value = Record.withDownloadURL(v.value, base: base) }
            f[k] = field.json
        }
        var o: [String: JSONValue] = [
            "recordName": .string(recordName),
            "recordType": .string(recordType),
            "recordChangeTag": .string(recordChangeTag),
            "fields": .object(f),
            "created": created.json,
            "modified": modified.json,
            "deleted": false,
            "zoneID": zoneID.json,
        ]
        if let p = parent { o["parent"] = ["recordName": .string(p)] }
        return .object(o)
    }

    static func withDownloadURL(_ v: JSONValue, base: String) -> JSONValue {
        switch v {
        case .array(let a): return .array(a.map { withDownloadURL($0, base: base) })
        case .object(var o):
            if let sum = o["fileChecksum"]?.stringValue { o["downloadURL"] = .string(base + AssetStore.relativePath(checksum: sum)) }
            return .object(o)
        default: return v
        }
    }

    /// A tombstone as change feeds and modify responses show deletions.
    public static func tombstone(recordName: String, zoneID: ZoneID) -> JSONValue {
        ["recordName": .string(recordName), "deleted": true, "zoneID": zoneID.json]
    }

    /// Reads a stored record dictionary back.
    public init(stored json: JSONValue) throws {
        guard let o = json.objectValue,
              let name = o["recordName"]?.stringValue, let type = o["recordType"]?.stringValue,
              let tag = o["recordChangeTag"]?.stringValue, let fj = o["fields"]?.objectValue, let z = o["zoneID"]
        else { throw CloudKitError.internalError("stored record is malformed") }
        var fields: [String: RecordField] = [:]
        for (k, v) in fj {
            guard let t = v["type"]?.stringValue, let ft = FieldType(tag: t), let val = v["value"] else {
                throw CloudKitError.internalError("stored record '\(name)' has a malformed field '\(k)'")
            }
            fields[k] = RecordField(type: ft, value: val)
        }
        self.init(recordName: name, recordType: type, recordChangeTag: tag, fields: fields,
                  created: try ChangeStamp(json: o["created"]), modified: try ChangeStamp(json: o["modified"]),
                  zoneID: try ZoneID(json: z), parent: o["parent"]?["recordName"]?.stringValue)
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
        for (k, v) in fields where v.type.base != .asset {
            n += k.utf8.count + JSONWriter.compact(v.value).utf8.count
        }
        return n
    }
}
