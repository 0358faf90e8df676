import CKJSON
import CKModel
import CKStore

/// ck's `log`: the changes of a zone (or of every zone of a database), a record or a field,
/// newest first as git lists commits. Each change is `{seq, timestamp, operation, recordName,
/// recordType, recordChangeTag, userRecordName, deviceID, zoneID, prev}`, with `fields:
/// {F: {old, new}}` when `patch` asks. Only changes the caller may see are listed, and the
/// versions a patch compares are the ones they could see (PermissionGate's history gate): a
/// change of a record they may not read is not there at all.
public struct LogRequest: Sendable {
    /// Only the changes of this record.
    public var recordName: String?
    /// nil: the zone `since` or `until` names, else every zone with `allZones`, else `_defaultZone`.
    public var zoneName: String?
    public var allZones: Bool
    /// Only changes that changed this field.
    public var field: String?
    public var since: HistoryReference?
    public var until: HistoryReference?
    /// Only changes by this user: an Apple ID that signed in on this device, or a user record name.
    public var user: String?
    /// Only changes made on this device.
    public var device: String?
    public var limit: Int?
    public var patch: Bool
    /// Oldest first.
    public var reverse: Bool

    public init(recordName: String? = nil, zoneName: String? = nil, allZones: Bool = false, field: String? = nil, since: HistoryReference? = nil,
                until: HistoryReference? = nil, user: String? = nil, device: String? = nil, limit: Int? = nil, patch: Bool = false, reverse: Bool = false) {
        self.recordName = recordName
        self.zoneName = zoneName
        self.allZones = allZones
        self.field = field
        self.since = since
        self.until = until
        self.user = user
        self.device = device
        self.limit = limit
        self.patch = patch
        self.reverse = reverse
    }
}

extension CloudKitAPI {
    /// The changes, handed to `change` one at a time as they are read (false: stop). One zone
    /// is streamed (reading k changes costs O(k)); several are each read up to the limit, then
    /// merged by time. Every reference is resolved before the first change is handed on.
    public func log(_ r: LogRequest, as caller: Caller, _ change: (JSONValue) throws -> Bool) throws {
        if let t = r.recordName { try Names.validateRecordName(t) }
        if let f = r.field { try Names.validateFieldName(f) }
        if let z = r.zoneName { try Names.validateZoneName(z) }
        if r.allZones && r.zoneName != nil { throw CloudKitError.badRequest("a log of every zone names no zone") }
        if let l = r.limit, l < 1 { throw CloudKitError.badRequest("a log's limit must be 1 or more, got \(l)") }
        let ctx = try preflight(nil, caller)
        let user = try r.user.map { try userRecordName($0) }
        let names = try ctx.historyZones(r.zoneName, refs: [r.since, r.until].compactMap { $0 }, everyZone: r.allZones)
        struct Range { var gate: HistoryGate; var after: Int64; var through: Int64 }
        let ranges: [Range] = try names.map { n in
            let z = try ctx.db.zone(n)
            // A time before the zone's history is its empty start, as `git log --since` and
            // `--until` take a date before the first commit: since then, everything; until
            // then, nothing.
            let a = try ctx.point(r.since, in: z, emptyBeforeHistory: true) ?? 0
            let b = try ctx.point(r.until, in: z, emptyBeforeHistory: true) ?? z.history.head()
            return Range(gate: ctx.gate.history(z), after: a, through: b)
        }
        func item(_ c: HistoryChange, _ gate: HistoryGate) throws -> JSONValue? {
            if let t = r.recordName, !c.recordName.sameBytes(t) { return nil }
            if let u = user, !c.userRecordName.sameBytes(u) { return nil }
            if let d = r.device, !c.deviceID.sameBytes(d) { return nil }
            guard try gate.canSee(c) else { return nil }
            let summary = try gate.summary(c)
            guard r.field != nil || r.patch else { return summary }
            let changes = RecordDiff.fieldChanges(try gate.before(c), try gate.after(c))
            if let f = r.field, !changes.contains(where: { $0.name.sameBytes(f) }) { return nil }
            guard var o = summary.objectValue else { return nil }
            if r.patch { o["fields"] = RecordDiff.fieldsJSON(changes) }
            return .object(o)
        }
        if ranges.count == 1 {
            let range = ranges[0]
            var n = 0
            var stopped = false
            try range.gate.zone.forEachChange(after: range.after, through: range.through, newestFirst: !r.reverse) { c in
                guard let j = try item(c, range.gate) else { return true }
                n += 1
                if try !change(j) { stopped = true }
                return !stopped && (r.limit.map { n < $0 } ?? true)
            }
            return
        }
        // Every zone: each zone's newest (or oldest) N, merged by time.
        var all: [(time: Int64, zone: String, seq: Int64, json: JSONValue)] = []
        for range in ranges {
            var n = 0
            try range.gate.zone.forEachChange(after: range.after, through: range.through, newestFirst: !r.reverse) { c in
                guard let j = try item(c, range.gate) else { return true }
                all.append((c.timestamp, range.gate.zone.zoneID.zoneName, c.seq, j))
                n += 1
                return r.limit.map { n < $0 } ?? true
            }
        }
        all.sort { a, b in
            if a.time != b.time { return r.reverse ? a.time < b.time : a.time > b.time }
            if !a.zone.sameBytes(b.zone) { return NameKey(a.zone) < NameKey(b.zone) }
            return r.reverse ? a.seq < b.seq : a.seq > b.seq
        }
        if let l = r.limit, all.count > l { all.removeLast(all.count - l) }
        for c in all where try !change(c.json) { return }
    }

    /// The whole log as one body, `{changes: [...]}`.
    public func log(_ r: LogRequest, as caller: Caller) throws -> DocumentBody {
        var changes: [JSONValue] = []
        try log(r, as: caller) { changes.append($0); return true }
        return DocumentBody(["changes": .array(changes)], listKey: "changes")
    }
}
