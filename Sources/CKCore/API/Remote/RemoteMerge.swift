import CKJSON
import CKModel
import CKStore

/// How a pull settles a record changed on both sides since their base.
public enum MergeStrategy: String, Sendable {
    /// List it and leave it as it is on both sides.
    case none
    /// Take the remote's version.
    case theirs
    /// Keep the local version; the next push sends it over the remote's.
    case ours
}

/// What a merge did.
public struct MergeReport: Sendable {
    /// Records saved or deleted locally to take the remote's version.
    public var saved: [String] = []
    public var deleted: [String] = []
    /// Records changed on both sides since the base, left as they are.
    public var conflicts: [String] = []
    /// Records the local store could not take (per-record errors), left for the next pull.
    public var failures: [CloudKitError] = []
    /// Records written or agreed whose remote version roots a share (RemoteShareMirror).
    var shareRoots: [JSONValue] = []
}

extension CloudKitAPI {
    /// The device a remote's changes are recorded as coming from in the local history.
    public static func remoteDevice(_ remote: String) -> String { "remote:" + remote }

    /// Brings what was fetched of a remote zone into the local zone, record by record, by the
    /// three-way rule: changed only remotely (local = base) → taken; the same on both sides →
    /// agreed; changed on both sides → a conflict, left as it is unless `strategy` decides.
    /// The local writes go through records/modify like any other, as the remote's device
    /// (`remote:NAME`), so that `ck log` shows them; the base moves only for what was taken or
    /// agreed, after the write commits. `fetchAsset`: the bytes of a remote asset; `remoteUser`:
    /// the caller's user record name on the remote (`users/caller`), asked only when a share
    /// changed and its record does not say it.
    public func mergeRemote(_ z: RemoteZone, strategy: MergeStrategy = .none, fetchAsset: ((_ url: String, _ checksum: String) throws -> [UInt8])? = nil,
                            remoteUser: (() throws -> String?)? = nil, as caller: Caller) throws -> MergeReport {
        var report = MergeReport()
        // Nothing fetched that the local store has not taken, as the summary kept beside an
        // unchanged log says: nothing to read, nothing to do.
        if let kept = try trackingLog(z, caller).summary().flatMap(TrackingSummary.init(kept:)), kept.behind == 0 { return report }
        let (log, state) = try trackedState(z, caller)
        let pending = Set(state.fetched.keys).union(state.base.keys).filter(state.differs).sorted()
        if pending.isEmpty { return report }
        // Shares are made by share operations, after the records they share (the owner's, in
        // their private database: in the shared database, the zone's owner).
        let shares = try RemoteShareMirror(api: self, zone: z, state: state, pending: pending, caller: caller, device: Self.remoteDevice(z.remote),
                                           remoteUser: remoteUser)
        let shareKeys = Set(shares.pendingShares)
        try mergeRecords(pending.filter { !shareKeys.contains($0) }, z, state: state, log: log, strategy: strategy, fetchAsset: fetchAsset,
                         writer: shares.owner, into: &report)
        if !shareKeys.isEmpty { try shares.apply(changed: report.shareRoots, log: log, into: &report) }
        report.shareRoots = []
        return report
    }

    private func mergeRecords(_ pending: [NameKey], _ z: RemoteZone, state: TrackedZone, log: RemoteTrackingLog, strategy: MergeStrategy,
                              fetchAsset: ((String, String) throws -> [UInt8])?, writer: Caller, into report: inout MergeReport) throws {
        if pending.isEmpty { return }
        // ck's own writes, not a client's request: no fault armed for an endpoint fails them.
        let ctx = try preflight(nil, writer, zones: [z.zoneName], need: .write)
        if writer.scope == .private, !z.zoneName.sameBytes(ZoneID.defaultZoneName) { _ = try ZoneLifecycle(ctx.db).create(z.zoneName) }
        // A chunk of names at a time, each its own commit, as a bulk load (`ck import`'s): the
        // indexes are made once at the end, and a zone nobody else writes meanwhile is not read
        // back. Memory stays flat whatever the zone's size.
        ctx.db.defersIndexMaintenance = true
        let load = BulkLoad(zone: z.zoneName)
        let before = try ctx.db.zone(z.zoneName).history.head()
        defer {
            if ((try? ctx.db.zone(z.zoneName).history.head()) ?? before) > before { try? ctx.db.finishBulkLoad(load) } else { load.discard() }
        }
        var at = 0
        while at < pending.count {
            let chunk = pending[at..<min(at + Limits.operationsPerBatch, pending.count)]
            at += chunk.count
            try mergeChunk(Array(chunk), state: state, log: log, strategy: strategy, fetchAsset: fetchAsset, zone: z, ctx: ctx, load: load, into: &report)
        }
    }

    private func mergeChunk(_ names: [NameKey], state: TrackedZone, log: RemoteTrackingLog, strategy: MergeStrategy,
                            fetchAsset: ((String, String) throws -> [UInt8])?, zone z: RemoteZone, ctx: RequestContext, load: BulkLoad,
                            into report: inout MergeReport) throws {
        let snapshot = try ctx.db.zone(z.zoneName).snapshot()
        var ops: [JSONValue] = []
        var agreed: [JSONValue] = [], agreedDeleted: [String] = []
        for key in names {
            let fetched = try state.fetchedRecord(key), base = try state.baseRecord(key)
            let stored = try snapshot.record(named: key.string)
            // A record here the caller may not read is not theirs to replace: a conflict.
            if let r = stored, try !ctx.gate.canRead(r) { report.conflicts.append(key.string); continue }
            let local = stored?.json()
            let localTag = stored?.recordChangeTag
            let takeRemote: Bool
            if RemoteRecordContent.same(local, base) {
                takeRemote = true
            } else if RemoteRecordContent.same(local, fetched) {
                if let f = fetched { agreed.append(f) } else { agreedDeleted.append(key.string) }
                continue
            } else {
                switch strategy {
                case .none: report.conflicts.append(key.string); continue
                case .theirs: takeRemote = true
                case .ours:
                    if let f = fetched { agreed.append(f) } else { agreedDeleted.append(key.string) }
                    continue
                }
            }
            guard takeRemote else { continue }
            // Written on the condition that the record is still as the merge saw it (its tag, or
            // absent): a change made here meanwhile is a conflict, never overwritten.
            if let f = fetched {
                var r = Self.localCopy(of: f)
                if let t = localTag { r["recordChangeTag"] = .string(t) }
                ops.append(.object(["operationType": .string(localTag == nil ? "create" : "replace"), "record": .object(r), "remote": f]))
            } else if let t = localTag {
                ops.append(.object(["operationType": "delete", "record": .object(["recordName": .string(key.string), "recordChangeTag": .string(t)])]))
            } else {
                agreedDeleted.append(key.string)
            }
        }
        var taken: [JSONValue] = [], gone: [String] = []
        if !ops.isEmpty {
            let uploaded = try fetchAsset.map { try Self.assetBytes(in: ops.map { .object(["record": .object(Self.rawFields(of: $0))]) }, fetch: $0) } ?? [:]
            let request = try ModifyRequest.parse(.object(["operations": .array(ops.map(Self.withoutRemote)), "atomic": false, "zoneID": .object(["zoneName": .string(z.zoneName)])]))
            try ensureUserRecords(request.operations.filter { $0.type != .create }.compactMap(\.recordName), zone: z.zoneName, caller: ctx.caller)
            let outcome = try ctx.db.modify(zone: z.zoneName, ModifyBatch(request.operations, atomic: false, assets: uploaded, bulk: load, options: ctx.options))
            let results = try outcome.results.map { try ctx.gate.admitWritten($0) }
            for (op, result) in zip(ops, results) {
                let name = op["record"]?["recordName"]?.stringValue ?? ""
                switch result {
                case .saved:
                    report.saved.append(name)
                    let remote = Self.rawFields(of: op)
                    if !remote.isEmpty { taken.append(.object(remote)) }
                case .deleted: report.deleted.append(name); gone.append(name)
                case .failed(let e) where e.code == .conflict || e.code == .exists:
                    report.conflicts.append(name)
                case .failed(let e):
                    if e.code == .notFound, op["operationType"]?.stringValue == "delete" { gone.append(name) } else { report.failures.append(e) }
                }
            }
        }
        report.shareRoots += (agreed + taken).filter { $0["share"]?["recordName"] != nil }
        // The base moves only after the local writes committed.
        if !(agreed + taken).isEmpty || !(agreedDeleted + gone).isEmpty {
            var c = RemoteTrackingLog.Change()
            c.base = agreed + taken
            c.baseDeleted = agreedDeleted + gone
            try log.append(c)
        }
    }

    /// The bytes of every asset of `ops` served over plain HTTP (a ck serve), checked against
    /// their checksum, by checksum.
    static func assetBytes(in ops: [JSONValue], fetch: (String, String) throws -> [UInt8]) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        func visit(_ v: JSONValue) throws {
            if let a = v.arrayValue { for e in a { try visit(e) }; return }
            guard let sum = v["fileChecksum"]?.stringValue, let url = v["downloadURL"]?.stringValue, !url.hasPrefix("https://"), out[sum] == nil else { return }
            let bytes = try fetch(url, sum)
            guard AssetValue.checksum(of: bytes) == sum else {
                throw CloudKitError(.internalError, "an asset downloaded from the remote does not match its fileChecksum \(sum)")
            }
            out[sum] = bytes
        }
        for op in ops { for (_, f) in op["record"]?["fields"]?.objectValue ?? [:] { try visit(f["value"] ?? .null) } }
        return out
    }

    static func withoutRemote(_ op: JSONValue) -> JSONValue {
        var o = op.objectValue ?? [:]
        o["remote"] = nil
        return .object(o)
    }

    /// The remote record an operation was made from (its asset URLs intact).
    static func rawFields(of op: JSONValue) -> [String: JSONValue] { op["remote"]?.objectValue ?? [:] }

    /// A remote record as a records/modify record: its name, type, fields and parent; an asset
    /// whose bytes come with the request loses its downloadURL (the bytes are stored here).
    static func localCopy(of r: JSONValue) -> [String: JSONValue] {
        var o: [String: JSONValue] = [:]
        for k in ["recordName", "recordType", "parent"] { if let v = r[k] { o[k] = v } }
        var fields: [String: JSONValue] = [:]
        for (name, f) in r["fields"]?.objectValue ?? [:] {
            var field = f.objectValue ?? [:]
            // A list read back from CloudKit may be typed a bare LIST: let the schema say.
            if field["type"]?.stringValue == "LIST" { field["type"] = nil }
            if let v = field["value"] { field["value"] = localAsset(v) }
            fields[name] = .object(field)
        }
        o["fields"] = .object(fields)
        return o
    }

    /// An asset served over plain HTTP (a ck serve) is stored here by its bytes; one behind
    /// https stays remote (its bytes on the service).
    static func localAsset(_ v: JSONValue) -> JSONValue {
        if let a = v.arrayValue { return .array(a.map(localAsset)) }
        guard var o = v.objectValue, o["fileChecksum"] != nil, let url = o["downloadURL"]?.stringValue, !url.hasPrefix("https://") else { return v }
        o["downloadURL"] = nil
        return .object(o)
    }
}
