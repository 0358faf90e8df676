import CKJSON

/// A record as a response shows it (`Record.response`), written straight to JSON bytes: the
/// same bytes as encoding `response(...)`, without building its dictionaries, sorting their keys
/// and freeing them again for every record of a listing, query or export.
public struct RecordResponse: JSONEncodable {
    public let record: Record
    public let style: ResponseStyle
    public let desiredKeys: Set<String>?
    public let withZoneID: Bool

    public init(_ record: Record, _ style: ResponseStyle, desiredKeys: Set<String>? = nil, withZoneID: Bool = true) {
        self.record = record
        self.style = style
        self.desiredKeys = desiredKeys
        self.withZoneID = withZoneID
    }

    public var jsonValue: JSONValue { record.response(style, desiredKeys: desiredKeys, withZoneID: withZoneID) }

    public func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        // A share record's own keys are laid out by the general path.
        guard record.shareInfo == nil else { return jsonValue.encodeJSON(into: &out, indent: indent, pretty: pretty) }
        Self.layout(record, style: style, desiredKeys: desiredKeys, withZoneID: withZoneID, into: &out, indent: indent, pretty: pretty)
    }

    /// The keys of a record, in the order of their bytes as JSONWriter sorts them: a response's
    /// (with `pluginFields`, asset values as `style` shows them) or, with no style, its file's
    /// (`Record.json()`, see `Record.encodeStored`). Not for share records.
    package static func layout(_ r: Record, style: ResponseStyle?, desiredKeys: Set<String>?, withZoneID: Bool,
                       into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.key(literal: "created", into: &out)
        Self.stamp(r.created, into: &out, indent: o.valueIndent, pretty: pretty)
        o.key(literal: "deleted", into: &out)
        JSONWriter.literal("false", into: &out)
        o.key(literal: "fields", into: &out)
        fields(r, style, desiredKeys: desiredKeys, into: &out, indent: o.valueIndent, pretty: pretty)
        o.key(literal: "modified", into: &out)
        Self.stamp(r.modified, into: &out, indent: o.valueIndent, pretty: pretty)
        if let p = r.parent {
            o.key(literal: "parent", into: &out)
            Self.reference(p, into: &out, indent: o.valueIndent, pretty: pretty)
        }
        if style != nil {
            o.key(literal: "pluginFields", into: &out)
            JSONWriter.literal("{}", into: &out)
        }
        o.string(literal: "recordChangeTag", r.recordChangeTag, into: &out)
        o.string(literal: "recordName", r.recordName, into: &out)
        o.string(literal: "recordType", r.recordType, into: &out)
        if let s = r.share {
            o.key(literal: "share", into: &out)
            Self.reference(s, into: &out, indent: o.valueIndent, pretty: pretty)
        }
        if let g = r.shortGUID {
            o.string(literal: "shortGUID", g, into: &out)
        }
        if withZoneID {
            o.key(literal: "zoneID", into: &out)
            r.zoneID.encodeJSON(into: &out, indent: o.valueIndent, pretty: pretty)
        }
        o.close(into: &out)
    }

    /// `style` nil: the values as stored (a record file), else as a response shows them.
    private static func fields(_ record: Record, _ style: ResponseStyle?, desiredKeys: Set<String>?, into out: inout [UInt8], indent: Int, pretty: Bool) {
        // Sorted with their values: looking each name up again hashed it a second time.
        var members: [(key: String, value: RecordField)] = []
        members.reserveCapacity(record.fields.count)
        for m in record.fields where desiredKeys?.contains(m.key) ?? true { members.append(m) }
        members.sort { $0.key.byteOrder($1.key) < 0 }
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        for (name, field) in members {
            o.key(name, into: &out)
            var f = JSONObjectEmitter(indent: o.valueIndent, pretty: pretty)
            f.string(literal: "type", field.type.rawValue, into: &out)
            f.key(literal: "value", into: &out)
            var value = field.type.base == .asset ? style.map { AssetValue.response(field.value, style: $0) } ?? field.value : field.value
            if style?.numbersAsStrings == true, NumbersAsStrings.applies(to: field.type) { value = NumbersAsStrings.shown(field) }
            JSONWriter.emit(value, into: &out, indent: f.valueIndent, pretty: pretty)
            f.close(into: &out)
        }
        o.close(into: &out)
    }

    private static func stamp(_ s: ChangeStamp, into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.string(literal: "deviceID", s.deviceID, into: &out)
        o.key(literal: "timestamp", into: &out)
        JSONWriter.emitInt(s.timestamp, into: &out)
        o.string(literal: "userRecordName", s.userRecordName, into: &out)
        o.close(into: &out)
    }

    private static func reference(_ name: String, into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.string(literal: "recordName", name, into: &out)
        o.close(into: &out)
    }
}

extension Record {
    /// `json()` — the record as its file and the history hold it — written straight to bytes (a
    /// share record's own keys by the general path).
    package func encodeStored(into out: inout [UInt8], indent: Int, pretty: Bool) {
        guard shareInfo == nil else { return JSONWriter.emit(json(), into: &out, indent: indent, pretty: pretty) }
        RecordResponse.layout(self, style: nil, desiredKeys: nil, withZoneID: true, into: &out, indent: indent, pretty: pretty)
    }

    /// The response dictionary (see `response`) as something to encode straight to bytes.
    public func encodableResponse(_ style: ResponseStyle, desiredKeys: Set<String>? = nil, withZoneID: Bool = true) -> RecordResponse {
        RecordResponse(self, style, desiredKeys: desiredKeys, withZoneID: withZoneID)
    }
}

/// A record as its file holds it, `{record, schemaVersion}` with the record as `Record.json()`,
/// written straight to bytes: the same bytes as `JSONWriter.pretty` of that document, without
/// building and sorting its dictionaries for every record a commit writes.
public struct StoredRecordFile: JSONEncodable {
    public let record: Record

    public init(_ record: Record) { self.record = record }

    public var jsonValue: JSONValue { ["schemaVersion": .int(FileFormat.schemaVersion), "record": record.json()] }

    public func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.key(literal: "record", into: &out)
        record.encodeStored(into: &out, indent: o.valueIndent, pretty: pretty)
        o.key(literal: "schemaVersion", into: &out)
        JSONWriter.emitInt(FileFormat.schemaVersion, into: &out)
        o.close(into: &out)
    }

    /// The file's bytes: pretty JSON and a final newline, as `JSONWriter.pretty` writes it.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        encodeJSON(into: &out, indent: 0, pretty: true)
        out.append(0x0A)
        return out
    }
}
