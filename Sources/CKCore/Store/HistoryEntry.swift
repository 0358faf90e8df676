/// One entry of a zone's change history as a commit appends it: a save (with the record as
/// stored) or a delete, by whom and when, and the entry it replaces (`prev`). Encoded straight
/// to its log line — the bytes `JSONWriter.line` writes for `jsonValue` — without building the
/// record's dictionaries for every entry a commit appends.
struct HistoryEntry: JSONEncodable {
    var seq: Int64
    var timestamp: Int64
    var op: String
    var recordName: String
    var userRecordName: String
    var deviceID: String
    /// The record as saved; nil for a delete.
    var record: Record?
    /// The entry of the record's previous version, when it had one.
    var prev: Int64?

    var jsonValue: JSONValue {
        var o: [String: JSONValue] = [
            "seq": .int(seq), "timestamp": .int(timestamp), "op": .string(op), "recordName": .string(recordName),
            "userRecordName": .string(userRecordName), "deviceID": .string(deviceID),
        ]
        if let r = record { o["record"] = r.json(); o["recordChangeTag"] = .string(r.recordChangeTag) }
        if let p = prev { o["prev"] = .int(p) }
        return .object(o)
    }

    func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        // Keys in the order of their bytes, as JSONWriter sorts them.
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.string("deviceID", deviceID, into: &out)
        o.string("op", op, into: &out)
        if let p = prev {
            o.key("prev", into: &out)
            JSONWriter.emit(.int(p), into: &out, indent: o.valueIndent, pretty: pretty)
        }
        if let r = record {
            o.key("record", into: &out)
            r.encodeStored(into: &out, indent: o.valueIndent, pretty: pretty)
            o.string("recordChangeTag", r.recordChangeTag, into: &out)
        }
        o.string("recordName", recordName, into: &out)
        o.key("seq", into: &out)
        JSONWriter.emit(.int(seq), into: &out, indent: o.valueIndent, pretty: pretty)
        o.key("timestamp", into: &out)
        JSONWriter.emit(.int(timestamp), into: &out, indent: o.valueIndent, pretty: pretty)
        o.string("userRecordName", userRecordName, into: &out)
        o.close(into: &out)
    }
}
