import CKJSON
import CKModel
import CKStore

/// ck's `blame`: for each field of a record (as of a point), the change that last set it —
/// `{recordName, recordType, recordChangeTag, zoneID, fields: [{field, type, value, seq,
/// timestamp, userRecordName, deviceID, recordChangeTag, boundary?}]}` — found by following
/// the record's own history back. A record the caller may not read (at that point) is
/// NOT_FOUND in the words a missing one gets. The walk back stops at the first version they
/// could not read then (as at the retained history's start): the fields set before it name
/// the oldest version they saw, with `boundary: true`.
public struct BlameRequest: Sendable {
    public var recordName: String
    /// nil: the zone `at` names, else `_defaultZone`.
    public var zoneName: String?
    public var at: HistoryReference?

    public init(recordName: String, zoneName: String? = nil, at: HistoryReference? = nil) {
        self.recordName = recordName
        self.zoneName = zoneName
        self.at = at
    }
}

extension CloudKitAPI {
    public func blame(_ r: BlameRequest, as caller: Caller) throws -> DocumentBody {
        try Names.validateRecordName(r.recordName)
        if let z = r.zoneName { try Names.validateZoneName(z) }
        let ctx = try preflight(nil, caller)
        let zone = try ctx.historyZones(r.zoneName, refs: r.at.map { [$0] } ?? [], everyZone: false)[0]
        let z = try ctx.db.zone(zone)
        let seq = try ctx.point(r.at, in: z)
        let snap = try z.snapshot()
        let gate = ctx.gate.history(z)
        guard let v = try z.version(of: r.recordName, at: seq ?? snap.head, in: snap), let rec = v.record,
              try gate.canRead(rec, at: seq ?? snap.head) else {
            throw ctx.gate.notFound(r.recordName, zone: z.zoneID, at: seq)
        }
        let fields: [JSONValue] = try z.blame(v, seen: { try gate.after($0) != nil }).map { f, c, boundary in
            var o: [String: JSONValue] = [
                "field": .string(f), "seq": .int(c.seq), "timestamp": .int(c.timestamp), "userRecordName": .string(c.userRecordName),
                "deviceID": .string(c.deviceID),
            ]
            if let t = c.recordChangeTag { o["recordChangeTag"] = .string(t) }
            if let value = rec.fields[f] {
                o["type"] = .string(value.type.rawValue)
                o["value"] = value.value
            }
            if boundary { o["boundary"] = true }
            return .object(o)
        }
        return DocumentBody(["recordName": .string(rec.recordName), "recordType": .string(rec.recordType), "recordChangeTag": .string(rec.recordChangeTag),
                             "zoneID": z.zoneID.json, "fields": .array(fields)], listKey: "fields")
    }
}
