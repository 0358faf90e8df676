import CKJSON
import CKModel
import CKStore

/// The one permission gate. Every record an answer carries passes `canRead`: current records,
/// records as of a point in history, change feeds, the server record of a CONFLICT, and what an
/// error message names. What the caller may not read does not exist for them: they are told
/// NOT_FOUND, in the same words whether the record exists or not.
struct PermissionGate {
    let db: Database

    /// Whether the caller may read this version of a record: in the public database as the
    /// record type's GRANTs say (nobody without an available account, so only `_world` GRANTs
    /// then); in the shared database only what is shared with them; in their own private
    /// database everything.
    func canRead(_ r: Record) throws -> Bool { try db.canRead(r) }

    /// Whether the caller may read every record of a zone (of the types `counted` and any
    /// other): what a count of them may be shown for (Database.readsEveryRecord).
    func readsEveryRecord(in z: ZoneStore, counted: some Sequence<String>) throws -> Bool {
        try db.readsEveryRecord(in: z, counted: counted)
    }

    /// A record the caller may read, as they may see it: a share record with only the
    /// participants they may see (ShareView: someone who came by a public share's URL sees its
    /// owner and themselves); nil when it does not exist for them.
    func shown(_ r: Record) throws -> Record? { try r.shareShown(to: db.caller.user?.userRecordName) }

    /// A result the caller may see: a record they may not read is NOT_FOUND; the server
    /// record of an error goes with the error only when they may read it.
    func admit(_ result: OperationResult, zone: ZoneID, at seq: Int64? = nil) throws -> OperationResult {
        switch result {
        case .saved(let r):
            guard try canRead(r), let shown = try shown(r) else { return .failed(notFound(r.recordName, zone: zone, at: seq)) }
            return .saved(shown)
        case .failed(var e):
            if let s = e.serverRecord, try !canRead(s) {
                e.serverRecord = nil
                e.nextStep = nil
            }
            return .failed(e)
        case .deleted:
            return result
        }
    }

    /// A write's result the caller may see. The record a write answers with is the writer's
    /// to shape (RecordWriter: a write-only user sees only what they wrote); the server record
    /// of a CONFLICT or EXISTS goes with the error only when the caller may read it.
    func admitWritten(_ result: OperationResult) throws -> OperationResult {
        // A share the write saved, as its writer sees it: with their own participant.
        if case .saved(let r) = result, r.shareInfo != nil, let state = try ShareState(r), let me = db.caller.user?.userRecordName,
           let view = state.view(for: me) {
            return .saved(r.shareShown(to: me, view, state: state))
        }
        guard case .failed(var e) = result, let s = e.serverRecord, try !canRead(s) else { return result }
        e.serverRecord = nil
        // The next step names the record's current tag: it goes with the record.
        e.nextStep = nil
        return .failed(e)
    }

    /// The answer about a record the caller cannot see: the same for a hidden record as for
    /// one that does not exist.
    func notFound(_ name: String, zone: ZoneID, at seq: Int64? = nil) -> CloudKitError {
        var e = CloudKitError.recordNotFound(name, zone: zone, scope: db.address.scope, at: seq)
        e.recordName = name
        return e
    }
}

extension PermissionGate {
    /// The gate as of the points of zone `z`'s history: one per zone a request reads (it keeps
    /// what it reads for the request).
    func history(_ z: ZoneStore) -> HistoryGate { HistoryGate(gate: self, zone: z) }

    /// The answer about a change the caller cannot see (a change of a record they may not
    /// read), which names nothing of the record.
    func changeNotFound(_ seq: Int64, zone: ZoneID) -> CloudKitError {
        var e = CloudKitError(.notFound, "change \(Names.describe(zone.zoneName))@\(seq) not found in zone \(Names.describe(zone.zoneName)) of the \(db.address.scope.rawValue) database",
                              zoneID: zone)
        e.database = db.address.scope
        return e
    }
}

/// What the caller could read at each point of one zone's history (log, show, diff, blame,
/// `--at`, the restore and revert plans):
/// - the owner, in their own private database: everything;
/// - the public database: what the record type's GRANTs let them read (the same at every
///   point: a record keeps its type and creator);
/// - the shared database (a participant, or a user who accepted a public share): only what was
///   shared with them at that point — the version's `parent` chain, the zone-wide share, the
///   share record and its participants, each as it was then in the owner's zone history.
/// A change is judged at the edges of its commit (nobody sees a zone halfway through one): a
/// save by the version it wrote, as of the end of its commit; a deletion by the version it
/// deleted, as of the point before its commit.
///
/// In the shared database the first question reads the zone's whole history once (which
/// names changed where, and which changes can move records in or out of a share); versions are
/// then read one entry each, and kept for the request.
final class HistoryGate {
    let gate: PermissionGate
    let zone: ZoneStore
    private enum Mode { case everything, grants, shared(user: String?) }
    private let mode: Mode
    private var snap: ZoneSnapshot?
    private var built: Timeline?
    /// The record each change wrote, by seq (nil: a deletion, or dropped by a compaction).
    private var written: [Int64: Record?] = [:]
    private var bounds: [Int64: (before: Int64, after: Int64)] = [:]

    init(gate: PermissionGate, zone: ZoneStore) {
        self.gate = gate
        self.zone = zone
        let db = gate.db
        if db.shared != nil { mode = .shared(user: db.caller.user?.userRecordName) } else if db.scope == .public { mode = .grants } else { mode = .everything }
    }

    /// Whether nothing is hidden from the caller.
    var seesEverything: Bool { if case .everything = mode { return true }; return false }

    // MARK: records as of a point

    /// Whether the caller could read this version of a record at point `seq`.
    func canRead(_ r: Record, at seq: Int64) throws -> Bool {
        switch mode {
        case .everything: return true
        case .grants: return try gate.canRead(r)
        case .shared(let me):
            guard let me else { return false }
            return try ShareVisibility.permission(me, on: r) { try self.version(of: $0, at: seq) } != nil
        }
    }

    /// The version of `name` at point `seq` (nil: absent then), whoever may read it.
    func version(of name: String, at seq: Int64) throws -> Record? {
        if case .shared = mode { return try timeline().last(of: name, atOrBefore: seq).flatMap { $0.saved ? try record(ofChange: $0.seq) : nil } }
        if snap == nil { snap = try zone.snapshot() }
        return try zone.version(of: name, at: seq, in: snap!)?.record
    }

    /// The version of `name` at `seq` if the caller could read it then.
    func visibleVersion(of name: String, at seq: Int64) throws -> Record? {
        guard let r = try version(of: name, at: seq) else { return nil }
        return try canRead(r, at: seq) ? r : nil
    }

    // MARK: changes

    /// Whether the caller may see change `c` at all: a save by the version it wrote, a
    /// deletion by the version it deleted (see above).
    func canSee(_ c: HistoryChange) throws -> Bool {
        if seesEverything { return true }
        if let r = c.record { return try readable(r) { try self.commit(c.seq).after } }
        guard let old = try replaced(c) else { return false }
        return try readable(old) { try self.commit(c.seq).before }
    }

    /// The version change `c` replaced, as the caller saw it just before the change's commit
    /// (nil: none, or hidden from them).
    func before(_ c: HistoryChange) throws -> Record? {
        guard let old = try replaced(c) else { return nil }
        return try readable(old) { try self.commit(c.seq).before } ? old : nil
    }

    /// The version change `c` wrote, as the caller saw it just after its commit (nil: a
    /// deletion, or hidden from them).
    func after(_ c: HistoryChange) throws -> Record? {
        guard let r = c.record else { return nil }
        return try readable(r) { try self.commit(c.seq).after } ? r : nil
    }

    /// The change as `log` lists it to the caller: `prev` only when the version it names was
    /// theirs to see (GRANTs judge every version of a record alike: it keeps its type and
    /// creator; only a share can hide the version before).
    func summary(_ c: HistoryChange) throws -> JSONValue {
        let s = c.summary(zoneID: zone.zoneID)
        guard c.prev != nil, case .shared = mode, try before(c) == nil, var o = s.objectValue else { return s }
        o["prev"] = nil
        return .object(o)
    }

    /// The records that differ between points `a` and `b` as the caller saw them: a record
    /// that became readable (or stopped being readable) between them is added (or deleted).
    func diff(from a: Int64, to b: Int64) throws -> [RecordDiff] {
        if seesEverything { return try zone.diff(from: a, to: b) }
        let raw: [RecordDiff]
        if case .shared = mode, try timeline().movesShares(between: min(a, b), max(a, b)) {
            // Records that did not change can come into a share or leave it: every name.
            raw = try timeline().names.map { RecordDiff(recordName: $0.string, before: try version(of: $0.string, at: a), after: try version(of: $0.string, at: b)) }
        } else {
            raw = try zone.diff(from: a, to: b)
        }
        return try raw.compactMap { d in
            let v = RecordDiff(recordName: d.recordName, before: try d.before.flatMap { try canRead($0, at: a) ? $0 : nil },
                               after: try d.after.flatMap { try canRead($0, at: b) ? $0 : nil })
            return v.isNoChange ? nil : v
        }
    }

    // MARK: reading

    private func readable(_ r: Record, at point: () throws -> Int64) throws -> Bool {
        switch mode {
        case .everything: return true
        case .grants: return try gate.canRead(r)
        case .shared: return try canRead(r, at: try point())
        }
    }

    private func replaced(_ c: HistoryChange) throws -> Record? { try c.prev.flatMap { try record(ofChange: $0) } }

    /// The record change `seq` wrote.
    func record(ofChange seq: Int64) throws -> Record? {
        if let r = written[seq] { return r }
        let r = try zone.change(seq)?.record
        written[seq] = .some(r)
        return r
    }

    private func commit(_ seq: Int64) throws -> (before: Int64, after: Int64) {
        if let b = bounds[seq] { return b }
        let b = try zone.history.commitBounds(of: seq)
        bounds[seq] = b
        return b
    }

    private func timeline() throws -> Timeline {
        if let t = built { return t }
        let t = try Timeline(zone)
        built = t
        return t
    }

    /// Which changes each name had, in order, and which changes can bring records into a
    /// share or take them out of one: a deletion (a parent gone ends its children's chain), a
    /// share record or the zone-wide share, a save that changes a record's `parent` or `share`.
    private final class Timeline {
        var changes: [NameKey: [(seq: Int64, saved: Bool)]] = [:]
        var sharing: [Int64] = []

        init(_ z: ZoneStore) throws {
            // Each record's parent and share as of the change read last (a record made anew
            // without either changes nobody's chain).
            var links: [NameKey: [NameKey?]] = [:]
            let none: [NameKey?] = [nil, nil]
            try z.forEachChange(after: 0, through: try z.history.head()) { c in
                let k = NameKey(c.recordName)
                changes[k, default: []].append((c.seq, c.record != nil))
                let now = c.record.map { [$0.parent.map(NameKey.init), $0.share.map(NameKey.init)] }
                if c.record == nil || c.record?.recordType == ShareInfo.recordType || c.recordName.sameBytes(ShareInfo.zoneWideName)
                    || (now ?? none) != (links[k] ?? none) {
                    sharing.append(c.seq)
                }
                links[k] = now
                return true
            }
        }

        var names: [NameKey] { changes.keys.sorted() }

        /// The last change of `name` at or before `seq`.
        func last(of name: String, atOrBefore seq: Int64) -> (seq: Int64, saved: Bool)? {
            guard let list = changes[NameKey(name)] else { return nil }
            var lo = 0, hi = list.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if list[mid].seq <= seq { lo = mid + 1 } else { hi = mid }
            }
            return lo == 0 ? nil : list[lo - 1]
        }

        /// Whether a change in `(lo, hi]` can move records into or out of a share.
        func movesShares(between lo: Int64, _ hi: Int64) -> Bool {
            var l = 0, h = sharing.count
            while l < h {
                let mid = (l + h) / 2
                if sharing[mid] <= lo { l = mid + 1 } else { h = mid }
            }
            return l < sharing.count && sharing[l] <= hi
        }
    }
}
