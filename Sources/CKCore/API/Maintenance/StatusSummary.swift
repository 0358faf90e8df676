import CKJSON
import CKModel
import CKStore

/// ck's status of a caller, as `git status` gives a repository's: where requests act, the
/// account, this device's bookmarks and how far behind each is, and the armed faults.
extension CloudKitAPI {
    /// `{dataDirectory, containerIdentifier, environment, database, device, account: {status,
    /// userRecordName?, appleID?}, zones: [{zoneName, bookmark?, behind?, reason?}],
    /// databaseChanges?, faults?}`. In the private and shared databases each custom zone and
    /// the database feed carry this device's bookmark (`none`, `behind` with the number of
    /// changes the next fetch returns, `expired`, `invalid`); in the shared database the
    /// database feed's `behind` counts the zones its next fetch reports. A database the caller
    /// may not read answers `zonesUnavailable` with the reason instead of `zones`: the status
    /// never fails for that. `faults`: the IDs of the armed faults, when there are any (a
    /// damaged faults file is left to the commands it fails). No fault fails the status.
    public func status(as caller: Caller) throws -> DocumentBody {
        try Names.validateContainerID(caller.container)
        let who = try principal(caller)
        var account: [String: JSONValue] = ["status": .string(who.status.rawValue)]
        if let u = who.user {
            account["userRecordName"] = .string(u.userRecordName)
            account["appleID"] = .string(u.appleID)
        }
        var o: [String: JSONValue] = [
            "dataDirectory": .string(dataDirectory),
            "containerIdentifier": .string(caller.container),
            "environment": .string(caller.environment.rawValue),
            "database": .string(caller.scope.rawValue),
            "device": .string(caller.deviceID),
            "account": .object(account),
        ]
        // A test that forgot to clear its faults shows here.
        if let faults = try? FaultStore(paths: store.paths).list(), !faults.isEmpty {
            o["faults"] = .array(faults.map { .string($0.id) })
        }
        do {
            let db = try preflight(nil, caller, need: .read).db
            let feeds = caller.scope != .public
            var zones: [JSONValue] = []
            let remotes = try remotes().filter { $0.url.container == caller.container && $0.url.environment == caller.environment }
            for z in try db.listZones() {
                var entry: [String: JSONValue] = ["zoneName": .string(z.zoneID.zoneName)]
                if feeds && !z.zoneID.isDefault { entry.merge(Self.lag(try db.bookmarks.lag(zone: z.zoneID.zoneName))) { $1 } }
                if let r = try remoteStanding(remotes, zone: z.zoneID, caller) { entry["remotes"] = r }
                zones.append(.object(entry))
            }
            o["zones"] = .array(zones)
            if feeds { o["databaseChanges"] = .object(Self.lag(try db.shared?.databaseBookmarkLag() ?? db.bookmarks.databaseLag())) }
        } catch let e as CloudKitError where e.code == .authenticationRequired || e.code == .accessDenied {
            o["zonesUnavailable"] = .string(e.reason)
        }
        // NDJSON and tables show a zone a line, then the rest.
        return DocumentBody(o, listKey: o["zones"] == nil ? nil : "zones")
    }

    /// Per remote tracking the zone, as `git status` says of a branch: `ahead` counts the
    /// records changed here since the base (what a push sends, or holds back), `behind` those
    /// fetched that the local store has not taken (what a pull merges).
    /// (A shared zone is tracked with its owner, whose user record name is the remote's.)
    func remoteStanding(_ remotes: [RemoteEntry], zone: ZoneID, _ caller: Caller) throws -> JSONValue? {
        var o: [String: JSONValue] = [:]
        for r in remotes {
            let z = RemoteZone(remote: r.name, zoneName: zone.zoneName, ownerRecordName: caller.scope == .shared ? zone.ownerRecordName : nil)
            let s = try remoteTracking(z, as: caller)
            guard s.exists else { continue }
            let plan = try pushPlan(z, as: caller)
            o[r.name] = .object(["ahead": .int(Int64(plan.operations.count + plan.behind.count)), "behind": .int(Int64(s.behind))])
        }
        return o.isEmpty ? nil : .object(o)
    }

    static func lag(_ lag: BookmarkLag) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["bookmark": .string(lag.state.rawValue)]
        if let n = lag.changes { o["behind"] = .int(n) }
        if let r = lag.reason { o["reason"] = .string(r) }
        return o
    }
}
