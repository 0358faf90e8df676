import CKJSON
import CKModel
import CKStore

/// ck's export (`ck export`): every record of a database the caller may read, or of one zone,
/// as NDJSON — one Web Services record with its zoneID per line, zone by zone in storage
/// order — which `ck import` reads back. `at`: the records as of a point (a tag or a time is a
/// point in every zone; a zone made after it exports nothing).
public struct ExportRequest: Sendable {
    /// nil: every zone of the database, unless `at` names one.
    public var zoneName: String?
    public var at: HistoryReference?

    public init(zoneName: String? = nil, at: HistoryReference? = nil) {
        self.zoneName = zoneName
        self.at = at
    }
}

extension CloudKitAPI {
    /// `line` gets each line, newline included, and returns false to stop. Lines are encoded
    /// on the threads that read their records.
    public func exportRecords(_ r: ExportRequest, as caller: Caller, _ line: (String) throws -> Bool) throws {
        let ctx = try preflight(nil, caller)
        let named = try r.zoneName ?? r.at.flatMap { try HistoryResolver(ctx.db).zoneName(of: $0) }
        let zones = try named.map { [try ctx.db.zone($0)] } ?? ctx.db.listZones()
        let style = ctx.style
        var stopped = false
        for z in zones where !stopped {
            let seq = try ctx.point(r.at, in: z, emptyBeforeHistory: zones.count > 1)
            let readable = seq.map { ctx.readable(in: z, at: $0) } ?? ctx.gate.canRead
            try ctx.forEachRecord(z, at: seq, prepare: { JSONWriter.line($0.encodableResponse(style)) }) { rec, prepared in
                guard try readable(rec) else { return true }
                if try !line(prepared ?? JSONWriter.line(rec.encodableResponse(style))) { stopped = true }
                return !stopped
            }
        }
    }
}
