import CKJSON
import CKModel
import CKStore

/// ck's `diff`: the records that differ between two points, `{changes: [{recordName,
/// recordType, zoneID, status: added|changed|deleted, fields: {F: {old, new}}}]}` zone by zone,
/// by record name; `stat` only counts them. As the caller saw each point: a record that became
/// readable to them between the points is added, one that stopped being readable is deleted,
/// and one they could read at neither is not there.
public struct DiffRequest: Sendable {
    public enum Output: Sendable {
        /// Every record with its fields.
        case full
        /// Records and what happened to them, without their fields.
        case nameOnly
        /// Only the counts: `{added, changed, deleted}`.
        case stat
    }

    public var from: HistoryReference
    /// nil: the newest change.
    public var to: HistoryReference?
    /// nil: the zone a reference names, else every zone of the database (a tag or a time is a
    /// point in each; a zone made after it counts from empty).
    public var zoneName: String?
    public var output: Output

    public init(from: HistoryReference, to: HistoryReference? = nil, zoneName: String? = nil, output: Output = .full) {
        self.from = from
        self.to = to
        self.zoneName = zoneName
        self.output = output
    }
}

extension RecordDiff {
    /// One entry of a diff: `{recordName, zoneID, status, recordType, fields?}`.
    func json(zoneID: ZoneID, fields: Bool) -> JSONValue {
        var o: [String: JSONValue] = ["recordName": .string(recordName), "zoneID": zoneID.json, "status": .string(status)]
        if let t = (after ?? before)?.recordType { o["recordType"] = .string(t) }
        if fields { o["fields"] = RecordDiff.fieldsJSON(self.fields) }
        return .object(o)
    }
}

extension CloudKitAPI {
    public func diff(_ r: DiffRequest, as caller: Caller) throws -> DocumentBody {
        if let z = r.zoneName { try Names.validateZoneName(z) }
        let ctx = try preflight(nil, caller)
        let refs = [r.from] + (r.to.map { [$0] } ?? [])
        let names = try ctx.historyZones(r.zoneName, refs: refs, everyZone: true)
        var items: [JSONValue] = []
        var counts = ["added": 0, "changed": 0, "deleted": 0]
        for n in names {
            let z = try ctx.db.zone(n)
            let a = try HistoryResolver(ctx.db).resolve(r.from, in: z, emptyBeforeHistory: names.count > 1)
            let b = try r.to.map { try HistoryResolver(ctx.db).resolve($0, in: z, emptyBeforeHistory: names.count > 1) } ?? z.history.head()
            for d in try ctx.gate.history(z).diff(from: a, to: b) {
                counts[d.status, default: 0] += 1
                if r.output != .stat { items.append(d.json(zoneID: z.zoneID, fields: r.output == .full)) }
            }
        }
        if r.output == .stat { return DocumentBody(counts.mapValues { .int(Int64($0)) }) }
        return DocumentBody(["changes": .array(items)], listKey: "changes")
    }
}
