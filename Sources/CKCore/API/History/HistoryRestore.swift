import CKJSON
import CKModel
import CKStore

/// ck's `restore` and `revert`: old versions written back as new changes, through
/// records/modify like any client's save (Store: `Database.apply`), so clients following
/// `zone changes` see ordinary updates and every token stays valid. The plan is made from what
/// the caller could see (PermissionGate's history gate), and its writes are theirs, checked as
/// any of their writes is. Both answer `{changes: [...]}` as `diff` does — from now to the
/// state written — each with its new `recordChangeTag` or its error; `dryRun` only plans.
public struct RestoreRequest: Sendable {
    public var ref: HistoryReference
    /// nil: the zone the reference names, else `_defaultZone`.
    public var zoneName: String?
    /// Only these records (empty: every record of the zone).
    public var recordNames: [String]
    public var dryRun: Bool
    /// The zone's head a preview was made at: the write is refused (CONFLICT) if the zone has
    /// moved on since, so what is written is what the preview showed.
    public var ifHead: Int64?

    public init(_ ref: HistoryReference, zoneName: String? = nil, recordNames: [String] = [], dryRun: Bool = false, ifHead: Int64? = nil) {
        self.ref = ref
        self.zoneName = zoneName
        self.recordNames = recordNames
        self.dryRun = dryRun
        self.ifHead = ifHead
    }
}

/// Undoing one change by writing its inverse as a new change (like git revert).
public struct RevertRequest: Sendable {
    /// A change: ZONE@SEQ; a token, tag or time stands for the last change at or before it.
    public var ref: HistoryReference
    public var zoneName: String?
    public var dryRun: Bool
    /// As RestoreRequest's.
    public var ifHead: Int64?

    public init(_ ref: HistoryReference, zoneName: String? = nil, dryRun: Bool = false, ifHead: Int64? = nil) {
        self.ref = ref
        self.zoneName = zoneName
        self.dryRun = dryRun
        self.ifHead = ifHead
    }
}

/// `{changes: [...]}`: the plan, and once written each record's result.
public struct HistoryWriteResponse: ResponseBody {
    /// The writes' results, in the plan's order (empty for a dry run or an empty plan).
    public var results: [OperationResult]
    let changes: [JSONValue]
    /// Where the plan was made: the zone's head, and the point of history the reference named
    /// (for a revert, the change undone) — what a confirmation names to write exactly this plan.
    public let head: Int64
    public let seq: Int64

    public var listKey: String? { "changes" }
    public var items: [any JSONEncodable] { changes }
    public var members: [String: JSONValue] { [:] }
}

extension CloudKitAPI {
    public func restore(_ r: RestoreRequest, as caller: Caller) throws -> HistoryWriteResponse {
        for n in r.recordNames { try Names.validateRecordName(n) }
        let (ctx, z) = try openHistoryWrite(r.ref, zoneName: r.zoneName, caller)
        let seq = try HistoryResolver(ctx.db).resolve(r.ref, in: z)
        let gate = ctx.gate.history(z)
        let snap = try z.snapshot()
        try Self.require(r.ifHead, at: snap.head, z)
        let plan: [RecordDiff]
        if r.recordNames.isEmpty {
            // Shares are made and ended by share operations, not written back as records.
            plan = try gate.diff(from: snap.head, to: seq).filter { !$0.isShare }
        } else {
            var seen = Set<NameKey>()
            plan = try r.recordNames.filter { seen.insert(NameKey($0)).inserted }.compactMap { n in
                let now = try snap.record(named: n).flatMap { try gate.canRead($0, at: snap.head) ? $0 : nil }
                let d = RecordDiff(recordName: n, before: now, after: try gate.visibleVersion(of: n, at: seq))
                return d.isNoChange ? nil : d
            }
        }
        return try write(plan, ctx, z, dryRun: r.dryRun, head: snap.head, seq: seq)
    }

    public func revert(_ r: RevertRequest, as caller: Caller) throws -> HistoryWriteResponse {
        let (ctx, z) = try openHistoryWrite(r.ref, zoneName: r.zoneName, caller)
        let zone = z.zoneID.zoneName
        let seq = try HistoryResolver(ctx.db).resolve(r.ref, in: z)
        guard seq > 0 else { throw CloudKitError(.badRequest, "'\(Names.describe(zone))@0' is the start of zone '\(Names.describe(zone))', before any change: nothing to revert", zoneID: z.zoneID) }
        guard let c = try z.change(seq) else {
            throw CloudKitError(.badRequest, "zone '\(Names.describe(zone))' has no change \(seq) to revert (a point reached by a token, tag or time must be one change of the zone)", zoneID: z.zoneID)
        }
        let gate = ctx.gate.history(z)
        guard try gate.canSee(c) else { throw ctx.gate.changeNotFound(seq, zone: z.zoneID) }
        if let p = c.prev, try z.change(p) == nil { throw HistoryCompaction.compacted(z.directory, first: try z.history.retainedFrom()) }
        // What the caller saw: the version it replaced, the one it wrote, and the one now.
        let snap = try z.snapshot()
        try Self.require(r.ifHead, at: snap.head, z)
        let current = try snap.record(named: c.recordName).flatMap { try gate.canRead($0, at: snap.head) ? $0 : nil }
        let plan = try RecordDiff.revert(c, replaced: try gate.before(c), wrote: try gate.after(c), current: current, zoneID: z.zoneID)
        return try write([plan], ctx, z, dryRun: r.dryRun, head: snap.head, seq: seq)
    }

    /// A confirmed preview is written only as it was shown: if the zone moved on, the plan made
    /// now could differ (a record changed meanwhile would be written back too).
    private static func require(_ ifHead: Int64?, at head: Int64, _ z: ZoneStore) throws {
        guard let expected = ifHead, expected != head else { return }
        let zone = Names.describe(z.zoneID.zoneName)
        throw CloudKitError(.conflict, "zone '\(zone)' changed since the preview (it was at \(zone)@\(expected), it is at \(zone)@\(head)): preview again", zoneID: z.zoneID)
    }

    /// The preflight of a restore or revert (they stand for records/modify, whose faults they
    /// meet), and the zone they write.
    private func openHistoryWrite(_ ref: HistoryReference, zoneName: String?, _ caller: Caller) throws -> (RequestContext, ZoneStore) {
        if let z = zoneName { try Names.validateZoneName(z) }
        let ctx = try preflight(.recordsModify, caller, zones: [zoneName ?? ref.namedZone ?? ZoneID.defaultZoneName])
        let zone = try ctx.historyZones(zoneName, refs: [ref], everyZone: false)[0]
        return (ctx, try ctx.db.zone(zone))
    }

    /// Prints the plan, and unless it is a dry run (or empty) writes it: each record then
    /// carries its new change tag, or its error.
    private func write(_ plan: [RecordDiff], _ ctx: RequestContext, _ z: ZoneStore, dryRun: Bool, head: Int64, seq: Int64) throws -> HistoryWriteResponse {
        let plan = plan.filter { !$0.isNoChange }
        let zoneID = z.zoneID
        if dryRun || plan.isEmpty {
            return HistoryWriteResponse(results: [], changes: plan.map { $0.json(zoneID: zoneID, fields: true) }, head: head, seq: seq)
        }
        let results = try HistoryWriter(ctx.db).apply(plan, zone: zoneID.zoneName).map { try ctx.gate.admitWritten($0) }
        let items: [JSONValue] = zip(plan, results).map { d, r in
            var o = d.json(zoneID: zoneID, fields: true).objectValue ?? [:]
            switch r {
            case .saved(let rec): o["recordChangeTag"] = .string(rec.recordChangeTag)
            case .deleted: break
            case .failed(let e): o["error"] = e.envelope(style: ctx.style)
            }
            return .object(o)
        }
        return HistoryWriteResponse(results: results, changes: items, head: head, seq: seq)
    }
}
