import CKModel
import CKStore

/// ck's `gc`: compacting a zone's history, as CloudKit's server ages its own
/// (HistoryCompaction): tokens and references older than what remains are then
/// CHANGE_TOKEN_EXPIRED. The history is the zone owner's: in the shared database it is
/// ACCESS_DENIED, and nothing changes.
public struct GCRequest: Sendable {
    /// nil: the zone `keepSince` names, else `_defaultZone`.
    public var zoneName: String?
    /// Keep the last `keep` changes whole (0: only the current state).
    public var keep: Int64
    /// Keep every change after this point (instead of `keep`).
    public var keepSince: HistoryReference?

    public init(zoneName: String? = nil, keep: Int64 = 0, keepSince: HistoryReference? = nil) {
        self.zoneName = zoneName
        self.keep = keep
        self.keepSince = keepSince
    }
}

extension CloudKitAPI {
    /// `{zoneID, retainedFrom, head, dropped, kept, logBytesBefore, logBytesAfter}`.
    public func compactHistory(_ r: GCRequest, as caller: Caller) throws -> DocumentBody {
        if let z = r.zoneName { try Names.validateZoneName(z) }
        guard r.keep >= 0 else { throw CloudKitError.badRequest("the changes to keep must be 0 or more, got \(r.keep)") }
        if r.keep != 0 && r.keepSince != nil { throw CloudKitError.badRequest("keep a number of changes or the changes since a point, not both") }
        let ctx = try preflight(nil, caller, need: .write)
        try ctx.requireOwnHistory("compacting a zone's history")
        let zone = try ctx.historyZones(r.zoneName, refs: r.keepSince.map { [$0] } ?? [], everyZone: false)[0]
        let (z, c) = try HistoryWriter(ctx.db).compact(zone: zone) { z, head in
            if let s = r.keepSince { return try HistoryResolver(ctx.db).resolve(s, in: z) + 1 }
            return max(1, head - r.keep + 1)
        }
        return DocumentBody(["zoneID": z.zoneID.json, "retainedFrom": .int(c.retainedFrom), "head": .int(c.head), "dropped": .int(c.dropped),
                             "kept": .int(c.keptBase), "logBytesBefore": .int(c.logBytesBefore), "logBytesAfter": .int(c.logBytesAfter)])
    }
}
