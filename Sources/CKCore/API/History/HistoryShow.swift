import CKModel
import CKStore

/// ck's `show`: one change, `{change, before, after, fields}` — the change as `log` lists it,
/// the record as it was before it (null: it did not exist) and after it (null: deleted), and
/// `{F: {old, new}}` for each field it changed. A change the caller may not see is NOT_FOUND,
/// naming nothing of its record; a side they could not read then is null (a record that came
/// into their view with the change was, to them, made by it).
public struct ShowRequest: Sendable {
    /// A change: ZONE@SEQ; a token, tag or time stands for the last change at or before it.
    public var ref: HistoryReference
    /// nil: the zone the reference names, else `_defaultZone`.
    public var zoneName: String?

    public init(_ ref: HistoryReference, zoneName: String? = nil) {
        self.ref = ref
        self.zoneName = zoneName
    }
}

extension CloudKitAPI {
    public func show(_ r: ShowRequest, as caller: Caller) throws -> DocumentBody {
        if let z = r.zoneName { try Names.validateZoneName(z) }
        let ctx = try preflight(nil, caller)
        let zone = try ctx.historyZones(r.zoneName, refs: [r.ref], everyZone: false)[0]
        let z = try ctx.db.zone(zone)
        let seq = try HistoryResolver(ctx.db).resolve(r.ref, in: z)
        guard seq > 0 else { throw CloudKitError(.badRequest, "'\(Names.describe(zone))@0' is the start of zone '\(Names.describe(zone))', before any change", zoneID: z.zoneID) }
        guard let c = try z.change(seq) else {
            var e = CloudKitError(.changeTokenExpired, "change \(seq) of zone '\(Names.describe(zone))' is no longer retained (the history was compacted)", zoneID: z.zoneID)
            e.nextStep = .readRetainedHistory
            throw e
        }
        let gate = ctx.gate.history(z)
        guard try gate.canSee(c) else { throw ctx.gate.changeNotFound(seq, zone: z.zoneID) }
        let before = try gate.before(c), after = try gate.after(c)
        return DocumentBody(["change": try gate.summary(c), "before": before?.response(ctx.style) ?? .null, "after": after?.response(ctx.style) ?? .null,
                             "fields": RecordDiff.fieldsJSON(RecordDiff.fieldChanges(before, after))])
    }
}
