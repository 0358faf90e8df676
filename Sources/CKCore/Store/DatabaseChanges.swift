/// `changes/database`: which zones changed or were deleted since a token, from the database's
/// own history (`history.log` beside `zones/`), one entry per zone create, write batch or delete.
public struct DatabaseChangesResult {
    public var zones: [ZoneID]
    public var deletedZones: [ZoneID]
    public var syncToken: String
    public var moreComing: Bool
}

extension Database {
    var databaseHistory: ChangeHistory { ChangeHistory(zoneDirectory: directory) }

    var databaseScopeKey: String {
        [address.container, address.environment.rawValue, scope.rawValue, ownerRecordName]
            .map { $0.replacingOccurrences(of: "|", with: "%7C") }.joined(separator: "|")
    }

    /// Records that a custom zone was created, written or deleted. Called without holding the
    /// zone's lock (zone deletion takes the database lock first, then the zone's).
    func noteZoneChange(_ zoneName: String, op: String) throws {
        guard scope != .public, zoneName != ZoneID.defaultZoneName else { return }
        try FileSystem.makeDirectories(directory)
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        try appendZoneChangeLocked(zoneName, op: op)
    }

    func appendZoneChangeLocked(_ zoneName: String, op: String) throws {
        guard scope != .public, zoneName != ZoneID.defaultZoneName else { return }
        let h = databaseHistory
        try h.append([["seq": .int(h.head() + 1), "timestamp": .int(clock.now()), "op": .string(op), "zoneName": .string(zoneName)]])
    }

    public func databaseChanges(since: String?, limit: Int = Limits.resultsPerPage) throws -> DatabaseChangesResult {
        try requireRead()
        if scope == .public {
            throw CloudKitError(.badRequest, "the public database has no change feed; CloudKit offers database changes only for the private and shared databases")
        }
        let h = databaseHistory
        var start: Int64 = 0
        if let s = since {
            let t = try ChangeToken.decode(s, secret: try tokenSecret.existing())
            guard t.kind == .database else { throw CloudKitError.badRequest("this is a zone change token, not a database change token") }
            guard t.scopeKey == databaseScopeKey else {
                throw CloudKitError.badRequest("change token belongs to another database, not the \(scope.rawValue) database of this user and container")
            }
            if t.seq > h.head() { throw CloudKitError.badRequest("change token is from the future of this database") }
            if t.epoch < (try h.epoch()) {
                throw CloudKitError(.changeTokenExpired, "change token expired: the database no longer retains history that old; fetch from the start")
            }
            start = t.seq
        }
        var order: [String] = []
        var last: [String: String] = [:]
        var end = start
        try h.forEachEntry(after: start) { e in
            guard let n = e["zoneName"]?.stringValue, let op = e["op"]?.stringValue, let seq = e["seq"]?.int64Value else { return true }
            if last[n] == nil {
                if order.count == limit { return false }
                order.append(n)
            }
            last[n] = op
            end = seq
            return true
        }
        var zones: [ZoneID] = [], deleted: [ZoneID] = []
        for n in order {
            if zoneStore(n).existsOnDisk { zones.append(zoneID(n)) } else { deleted.append(zoneID(n)) }
        }
        let token = ChangeToken(kind: .database, scopeKey: databaseScopeKey, seq: end).encode(secret: try tokenSecret.getOrCreate())
        return DatabaseChangesResult(zones: zones, deletedZones: deleted, syncToken: token, moreComing: end < h.head())
    }
}
