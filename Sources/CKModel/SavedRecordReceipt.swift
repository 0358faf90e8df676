import CKJSON

/// What `ck import` reports for each record it saved: `{recordName, recordChangeTag, zoneID}`,
/// written straight to JSON bytes (the same bytes as encoding `jsonValue`), so a load of
/// 100,000 records builds no dictionary per result.
public struct SavedRecordReceipt: JSONEncodable {
    public let recordName: String
    public let recordChangeTag: String
    public let zoneID: ZoneID

    public init(_ record: Record) {
        recordName = record.recordName
        recordChangeTag = record.recordChangeTag
        zoneID = record.zoneID
    }

    public var jsonValue: JSONValue {
        ["recordName": .string(recordName), "recordChangeTag": .string(recordChangeTag), "zoneID": zoneID.json]
    }

    public func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.string(literal: "recordChangeTag", recordChangeTag, into: &out)
        o.string(literal: "recordName", recordName, into: &out)
        o.key(literal: "zoneID", into: &out)
        zoneID.encodeJSON(into: &out, indent: o.valueIndent, pretty: pretty)
        o.close(into: &out)
    }
}

extension ZoneID: JSONEncodable {
    /// `json`, written straight to bytes (keys in sorted order).
    public func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        var z = JSONObjectEmitter(indent: indent, pretty: pretty)
        z.string(literal: "ownerRecordName", ownerRecordName, into: &out)
        z.string(literal: "zoneName", zoneName, into: &out)
        z.string(literal: "zoneType", zoneType, into: &out)
        z.close(into: &out)
    }

    public var jsonValue: JSONValue { json }
}
