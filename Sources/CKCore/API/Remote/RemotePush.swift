import CKJSON
import CKModel
import CKStore

/// The records/modify operations a push sends for a zone: what changed locally since the base.
public struct PushPlan: Sendable {
    /// Web Services operations: `create` for a record new here, `update` with the base's tag
    /// for one changed here, `delete` with it for one deleted here (`forceUpdate` and
    /// `forceDelete` under `force`).
    public var operations: [JSONValue] = []
    /// Records changed here whose remote version also moved since the base (as last fetched):
    /// a push would overwrite a change it never saw, so they wait for a pull (or `--force`).
    public var behind: [String] = []

    public init() {}
}

/// What a push's answers did to the base.
public struct PushOutcome: Sendable {
    public var saved: [String] = []
    public var deleted: [String] = []
    /// Per-record CONFLICT, EXISTS and other failures, as the remote answered them.
    public var failures: [CloudKitError] = []

    public init() {}
}

extension CloudKitAPI {
    public func pushPlan(_ z: RemoteZone, force: Bool = false, as caller: Caller) throws -> PushPlan {
        let (_, state) = try trackedState(z, caller)
        let ctx = try preflight(nil, caller, need: .read)
        var plan = PushPlan()
        var seen = Set<NameKey>()
        let style = responseStyle(caller.scope)
        func tag(_ r: JSONValue?) -> JSONValue? { r?["recordChangeTag"] }
        let zone: ZoneStore
        do { zone = try ctx.db.zone(z.zoneName) } catch let e as CloudKitError where e.code == .zoneNotFound {
            return try deletionsOnly(state, force: force, into: &plan)
        }
        try zone.snapshot().forEachRecord { record in
            let key = NameKey(record.recordName)
            // Seen even when the caller may not read it: a record here is never a deletion.
            seen.insert(key)
            // Shares change through share operations, never as records (Docs/remote.md).
            guard record.recordType != ShareInfo.recordType, try ctx.gate.canRead(record) else { return true }
            let local = record.response(style, withZoneID: false)
            let base = try state.baseRecord(key), fetched = try state.fetchedRecord(key)
            if let base {
                guard !RemoteRecordContent.same(local, base) else { return true }
                if !force, tag(fetched) != tag(base) { plan.behind.append(record.recordName); return true }
                plan.operations.append(Self.pushOperation(force ? "forceUpdate" : "update", local, tag: force ? nil : tag(base)))
            } else if let fetched {
                // There on both sides, never agreed: the same data is agreement, anything else waits.
                if RemoteRecordContent.same(local, fetched) { return true }
                if force { plan.operations.append(Self.pushOperation("forceReplace", local, tag: nil)) } else { plan.behind.append(record.recordName) }
            } else {
                plan.operations.append(Self.pushOperation(force ? "forceReplace" : "create", local, tag: nil))
            }
            return true
        }
        for (key, base) in state.base where !seen.contains(key) && base.recordType != ShareInfo.recordType {
            if !force, state.fetched[key]?.tag != base.tag { if state.fetched[key] != nil { plan.behind.append(key.string) }; continue }
            var r: [String: JSONValue] = ["recordName": .string(key.string)]
            if !force, let t = base.tag { r["recordChangeTag"] = .string(t) }
            plan.operations.append(.object(["operationType": .string(force ? "forceDelete" : "delete"), "record": .object(r)]))
        }
        plan.operations.sort { ($0["record"]?["recordName"]?.stringValue ?? "").utf8.lexicographicallyPrecedes(($1["record"]?["recordName"]?.stringValue ?? "").utf8) }
        plan.behind.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return plan
    }

    /// A zone deleted here: every record of the base goes, with its tag.
    private func deletionsOnly(_ state: TrackedZone, force: Bool, into plan: inout PushPlan) throws -> PushPlan {
        for (key, base) in state.base.sorted(by: { $0.key < $1.key }) where base.recordType != ShareInfo.recordType {
            if !force, state.fetched[key]?.tag != base.tag { if state.fetched[key] != nil { plan.behind.append(key.string) }; continue }
            var r: [String: JSONValue] = ["recordName": .string(key.string)]
            if !force, let t = base.tag { r["recordChangeTag"] = .string(t) }
            plan.operations.append(.object(["operationType": .string(force ? "forceDelete" : "delete"), "record": .object(r)]))
        }
        return plan
    }

    /// The bytes of a record's asset field, for a push's upload: ck's own read (no endpoint, so
    /// no fault), through the permission gate.
    public func assetBytesForPush(recordName: String, fieldName: String, zoneName: String, as caller: Caller) throws -> [UInt8] {
        let ctx = try preflight(nil, caller, need: .read)
        guard let r = try ctx.db.zone(zoneName).snapshot().record(named: recordName), try ctx.gate.canRead(r) else {
            throw CloudKitError(.notFound, "record '\(Names.describe(recordName))' is not in zone '\(zoneName)'")
        }
        guard let f = r.fields[fieldName], let sum = f.value["fileChecksum"]?.stringValue, let bytes = try store.assets.read(checksum: sum) else {
            throw CloudKitError(.notFound, "the bytes of asset field '\(fieldName)' of record '\(Names.describe(recordName))' are not in this data directory")
        }
        return bytes
    }

    /// A record as the remote answered a push, with the asset fields of the record as planned
    /// here (their checksum ck's own).
    static func withLocalAssets(_ answered: [String: JSONValue], _ planned: JSONValue?) -> [String: JSONValue] {
        guard let local = planned?["fields"]?.objectValue, var fields = answered["fields"]?.objectValue else { return answered }
        func isAsset(_ v: JSONValue) -> Bool { v["fileChecksum"] != nil || (v.arrayValue?.first?["fileChecksum"] != nil) }
        for (name, f) in local where isAsset(f["value"] ?? .null) { fields[name] = f }
        var r = answered
        r["fields"] = .object(fields)
        return r
    }

    static func pushOperation(_ type: String, _ local: JSONValue, tag: JSONValue?) -> JSONValue {
        var r: [String: JSONValue] = [:]
        for k in ["recordName", "recordType", "fields", "parent"] { if let v = local[k] { r[k] = v } }
        if let t = tag { r["recordChangeTag"] = t }
        return .object(["operationType": .string(type), "record": .object(r)])
    }

    /// Records what the remote answered a push: a saved record is the new base (and what was
    /// fetched: the remote holds it now), a deletion removes both; failures change nothing.
    /// `sent`: the operations the answers are for, in order (an answer that leaves out the
    /// fields takes them from what was sent). `planned`: the same operations as the plan made
    /// them, before their assets were uploaded: the base keeps the local asset values, since
    /// the service names uploaded bytes by a checksum of its own (the asset is the same, and
    /// must not look changed here after the push).
    public func recordPushed(_ z: RemoteZone, sent: [JSONValue], answers: [JSONValue], planned: [JSONValue]? = nil, as caller: Caller) throws -> PushOutcome {
        let log = try trackingLog(z, caller)
        var sentRecords: [NameKey: JSONValue] = [:], plannedRecords: [NameKey: JSONValue] = [:]
        for op in sent { if let r = op["record"], let n = r["recordName"]?.stringValue { sentRecords[NameKey(n)] = r } }
        for op in planned ?? [] { if let r = op["record"], let n = r["recordName"]?.stringValue { plannedRecords[NameKey(n)] = r } }
        var out = PushOutcome()
        var saved: [JSONValue] = [], base: [JSONValue] = [], deleted: [String] = []
        for a in answers {
            let name = a["recordName"]?.stringValue ?? ""
            if let code = a["serverErrorCode"]?.stringValue {
                var e = CloudKitError(ServerErrorCode(rawValue: code) ?? .internalError, a["reason"]?.stringValue ?? code)
                e.recordName = name
                out.failures.append(e)
            } else if a["deleted"]?.boolValue == true {
                deleted.append(name)
                out.deleted.append(name)
            } else if a["recordChangeTag"] != nil {
                var record = a.objectValue ?? [:]
                if record["fields"] == nil, let s = sentRecords[NameKey(name)] {
                    for k in ["fields", "recordType", "parent"] where record[k] == nil { record[k] = s[k] }
                }
                saved.append(.object(record))
                base.append(.object(Self.withLocalAssets(record, plannedRecords[NameKey(name)])))
                out.saved.append(name)
            }
        }
        if !saved.isEmpty || !deleted.isEmpty {
            var c = RemoteTrackingLog.Change()
            (c.fetched, c.base, c.fetchedDeleted, c.baseDeleted) = (saved, base, deleted, deleted)
            try log.append(c)
        }
        return out
    }
}
