import CKJSON
import CKModel
import CKStore

extension CloudKitAPI {
    /// `ck diff REMOTE/ZONE`: the local zone against the remote's as last fetched, offline, in
    /// `ck diff`'s shape — `{changes: [{recordName, recordType, zoneID, status, fields: {F: {old,
    /// new}}}]}` with `old` the remote's and `new` the local value (added: only here; deleted:
    /// only there); `stat` counts them. `record`: one record's three sides, `{recordName, base,
    /// remote, local}` (null where it is not), to settle a conflict by.
    public func remoteDiff(_ z: RemoteZone, output: DiffRequest.Output = .full, record: String? = nil, as caller: Caller) throws -> DocumentBody {
        let (_, state) = try trackedState(z, caller)
        let ctx = try preflight(nil, caller, need: .read)
        let style = responseStyle(caller.scope)
        let zone: ZoneStore? = try? ctx.db.zone(z.zoneName)
        let snapshot = try zone?.snapshot()
        func local(_ name: String) throws -> JSONValue? {
            try snapshot?.record(named: name).flatMap { try ctx.gate.canRead($0) ? $0.response(style, withZoneID: false) : nil }
        }
        if let name = record {
            try Names.validateRecordName(name)
            let k = NameKey(name)
            return DocumentBody(["recordName": .string(name), "base": try state.baseRecord(k) ?? .null, "remote": try state.fetchedRecord(k) ?? .null,
                                 "local": try local(name) ?? .null])
        }
        var localNames: [NameKey: JSONValue] = [:]
        try snapshot?.forEachRecord { r in
            if try ctx.gate.canRead(r) { localNames[NameKey(r.recordName)] = r.response(style, withZoneID: false) }
            return true
        }
        let zoneID = ZoneID(zoneName: z.zoneName, ownerRecordName: z.ownerRecordName ?? ctx.principal.user?.userRecordName ?? ZoneID.defaultOwner)
        var items: [JSONValue] = []
        var counts = ["added": 0, "changed": 0, "deleted": 0]
        for key in Set(localNames.keys).union(state.fetched.keys).sorted() {
            let theirs = try state.fetchedRecord(key), ours = localNames[key]
            if RemoteRecordContent.same(theirs, ours) { continue }
            let status = theirs == nil ? "added" : ours == nil ? "deleted" : "changed"
            counts[status, default: 0] += 1
            if output == .stat { continue }
            var o: [String: JSONValue] = ["recordName": .string(key.string), "zoneID": zoneID.json, "status": .string(status)]
            if let t = (ours ?? theirs)?["recordType"] { o["recordType"] = t }
            if output == .full {
                var fields: [String: JSONValue] = [:]
                let a = theirs?["fields"]?.objectValue ?? [:], b = ours?["fields"]?.objectValue ?? [:]
                for f in Set(a.keys).union(b.keys) {
                    let old = a[f], new = b[f]
                    let type = (old ?? new)?["type"]?.stringValue ?? ""
                    if old.map({ RemoteRecordContent.canonical($0["value"] ?? .null, type: type) }) == new.map({ RemoteRecordContent.canonical($0["value"] ?? .null, type: type) }) { continue }
                    fields[f] = .object(["old": old ?? .null, "new": new ?? .null])
                }
                o["fields"] = .object(fields)
            }
            items.append(.object(o))
        }
        if output == .stat { return DocumentBody(counts.mapValues { .int(Int64($0)) }) }
        return DocumentBody(["changes": .array(items)], listKey: "changes")
    }
}
