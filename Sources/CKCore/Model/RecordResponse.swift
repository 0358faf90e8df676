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
        let r = record
        // A share record's own keys are laid out by the general path.
        guard r.shareInfo == nil else { return jsonValue.encodeJSON(into: &out, indent: indent, pretty: pretty) }
        // Keys in the order of their bytes, as JSONWriter sorts them.
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.key("created", into: &out)
        Self.stamp(r.created, into: &out, indent: o.valueIndent, pretty: pretty)
        o.key("deleted", into: &out)
        out.append(contentsOf: "false".utf8)
        o.key("fields", into: &out)
        fields(into: &out, indent: o.valueIndent, pretty: pretty)
        o.key("modified", into: &out)
        Self.stamp(r.modified, into: &out, indent: o.valueIndent, pretty: pretty)
        if let p = r.parent {
            o.key("parent", into: &out)
            Self.reference(p, into: &out, indent: o.valueIndent, pretty: pretty)
        }
        o.key("pluginFields", into: &out)
        out.append(contentsOf: "{}".utf8)
        o.key("recordChangeTag", into: &out)
        JSONWriter.emitString(r.recordChangeTag, into: &out)
        o.key("recordName", into: &out)
        JSONWriter.emitString(r.recordName, into: &out)
        o.key("recordType", into: &out)
        JSONWriter.emitString(r.recordType, into: &out)
        if let s = r.share {
            o.key("share", into: &out)
            Self.reference(s, into: &out, indent: o.valueIndent, pretty: pretty)
        }
        if let g = r.shortGUID {
            o.key("shortGUID", into: &out)
            JSONWriter.emitString(g, into: &out)
        }
        if withZoneID {
            o.key("zoneID", into: &out)
            var z = JSONObjectEmitter(indent: o.valueIndent, pretty: pretty)
            z.key("ownerRecordName", into: &out)
            JSONWriter.emitString(r.zoneID.ownerRecordName, into: &out)
            z.key("zoneName", into: &out)
            JSONWriter.emitString(r.zoneID.zoneName, into: &out)
            z.key("zoneType", into: &out)
            JSONWriter.emitString(r.zoneID.zoneType, into: &out)
            z.close(into: &out)
        }
        o.close(into: &out)
    }

    private func fields(into out: inout [UInt8], indent: Int, pretty: Bool) {
        var names = record.fields.keys.filter { desiredKeys?.contains($0) ?? true }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        for name in names {
            let field = record.fields[name]!
            o.key(name, into: &out)
            var f = JSONObjectEmitter(indent: o.valueIndent, pretty: pretty)
            f.key("type", into: &out)
            JSONWriter.emitString(field.type.rawValue, into: &out)
            f.key("value", into: &out)
            let value = field.type.base == .asset ? AssetValue.response(field.value, style: style) : field.value
            JSONWriter.emit(value, into: &out, indent: f.valueIndent, pretty: pretty)
            f.close(into: &out)
        }
        o.close(into: &out)
    }

    private static func stamp(_ s: ChangeStamp, into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.key("deviceID", into: &out)
        JSONWriter.emitString(s.deviceID, into: &out)
        o.key("timestamp", into: &out)
        JSONWriter.emit(.int(s.timestamp), into: &out, indent: o.valueIndent, pretty: pretty)
        o.key("userRecordName", into: &out)
        JSONWriter.emitString(s.userRecordName, into: &out)
        o.close(into: &out)
    }

    private static func reference(_ name: String, into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.key("recordName", into: &out)
        JSONWriter.emitString(name, into: &out)
        o.close(into: &out)
    }
}

extension Record {
    /// The response dictionary (see `response`) as something to encode straight to bytes.
    public func encodableResponse(_ style: ResponseStyle, desiredKeys: Set<String>? = nil, withZoneID: Bool = true) -> RecordResponse {
        RecordResponse(self, style, desiredKeys: desiredKeys, withZoneID: withZoneID)
    }
}
