import CKJSON
import CKModel
import CKStore

/// ck's own operation, for the console's navigator (Web Services has no such endpoint): how
/// many records each zone of a database holds, as the caller may learn it. A zone's count
/// costs what reading a record costs, whatever the zone's size (Database.recordCounts), and
/// passes the permission gate: it is given only when the caller may read every record it
/// counts (PermissionGate.readsEveryRecord) — never in a zone of which only some records are shared
/// with them, nor where a record type's GRANTs hide records of others.
extension CloudKitAPI {
    /// `{zones: [{zoneID, recordCount?}]}`, the zones `zones/list` gives the caller, in its
    /// order; `recordCount` absent where it may not be shown, or is not kept yet (a zone
    /// without a commit since it was made, or since counts were kept).
    public func zoneRecordCounts(as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(nil, caller)
        var zones: [JSONValue] = []
        for z in try ctx.db.listZones() {
            var o: [String: JSONValue] = ["zoneID": z.zoneID.json]
            if let n = try recordCount(z, ctx) { o["recordCount"] = .int(n) }
            zones.append(.object(o))
        }
        return DocumentBody(["zones": .array(zones)], listKey: "zones")
    }

    private func recordCount(_ z: ZoneStore, _ ctx: RequestContext) throws -> Int64? {
        // A default zone before its first record holds none; the gate still decides, so that
        // an empty zone's 0 tells no one what a dash would not.
        let counts = z.incarnation.isEmpty ? [:] : try ctx.db.recordCounts(in: z)
        guard let counts, try ctx.gate.readsEveryRecord(in: z, counted: counts.keys) else { return nil }
        // Each count is at most the zone's history entries (ZoneIndex.readCatalog): no overflow.
        return counts.values.reduce(0, +)
    }
}
