/// `changes/zone`: what changed in a custom zone since a token, read from the zone's history,
/// so the cost follows the number of changes, not the size of the zone.
public struct ZoneChangesResult {
    public var zoneID: ZoneID
    /// Latest state of each changed record, or a tombstone.
    public var changes: [RecordChange]
    public var syncToken: String
    public var moreComing: Bool

    public enum RecordChange {
        case record(Record)
        case deleted(String)
    }
}

extension Database {
    var tokenSecret: TokenSecret { TokenSecret(paths: paths) }

    func zoneScopeKey(_ z: ZoneStore) throws -> String {
        [address.container, address.environment.rawValue, scope.rawValue, z.zoneID.ownerRecordName, z.zoneID.zoneName, try z.incarnation()]
            .map { $0.replacingOccurrences(of: "|", with: "%7C") }.joined(separator: "|")
    }

    /// Change feeds exist only for custom zones of the private and shared databases.
    func changeFeedZone(_ name: String) throws -> ZoneStore {
        if scope == .public {
            throw CloudKitError(.badRequest, "the public database has no change feeds; CloudKit offers zone changes only in custom zones of the private and shared databases (poll with a query instead)", zoneID: zoneID(name))
        }
        if name == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "the default zone has no change feed; CloudKit offers zone changes only in custom zones (create one with 'ck zone create')", zoneID: zoneID(name))
        }
        return try zone(name)
    }

    /// Checks a zone token: BAD_REQUEST when forged or foreign, CHANGE_TOKEN_EXPIRED when older
    /// than the retained history or from an earlier zone of the same name.
    func checkZoneToken(_ raw: String, zone z: ZoneStore) throws -> Int64 {
        let t = try ChangeToken.decode(raw, secret: try tokenSecret.existing())
        guard t.kind == .zone else { throw CloudKitError(.badRequest, "this is a database change token, not a zone change token", zoneID: z.zoneID) }
        let mine = try zoneScopeKey(z)
        if t.scopeKey != mine {
            let a = t.scopeKey.split(separator: "|", omittingEmptySubsequences: false), b = mine.split(separator: "|", omittingEmptySubsequences: false)
            if a.count == b.count && Array(a.dropLast()) == Array(b.dropLast()) {
                throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(z.zoneID.zoneName)' was deleted and created again since; fetch from the start", zoneID: z.zoneID)
            }
            let other = a.count >= 5 ? "zone '\(a[4])' of the \(a[2]) database" : "another zone"
            throw CloudKitError(.badRequest, "change token belongs to \(other), not zone '\(z.zoneID.zoneName)' of the \(scope.rawValue) database", zoneID: z.zoneID)
        }
        if try t.seq > z.history.head() || t.epoch > z.history.epoch() { throw CloudKitError(.badRequest, "change token is from the future of zone '\(z.zoneID.zoneName)'", zoneID: z.zoneID) }
        if t.epoch < (try z.history.epoch()) {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(z.zoneID.zoneName)' no longer retains history that old; fetch from the start", zoneID: z.zoneID)
        }
        return t.seq
    }

    /// Fetches up to `limit` changed records after `since` (nil: from the start).
    public func zoneChanges(zone name: String, since: String?, limit: Int = Limits.resultsPerPage) throws -> ZoneChangesResult {
        let z = try changeFeedZone(name)
        var start: Int64 = 0
        if let s = since { start = try checkZoneToken(s, zone: z) }
        var order: [String] = []
        var seen = Set<String>()
        var end = start
        let head = z.history.head()
        try z.history.forEachEntry(after: start) { e in
            guard let n = e["recordName"]?.stringValue, let seq = e["seq"]?.int64Value else { return true }
            if !seen.contains(n) {
                if order.count == limit { return false }
                seen.insert(n)
                order.append(n)
            }
            end = seq
            return true
        }
        // From the start there is nothing to forget: only records that exist are returned.
        let changes: [ZoneChangesResult.RecordChange] = try order.compactMap { n in
            if let r = try z.record(named: n) { return .record(r) }
            return since == nil ? nil : .deleted(n)
        }
        let token = ChangeToken(kind: .zone, scopeKey: try zoneScopeKey(z), seq: end, epoch: try z.history.epoch()).encode(secret: try tokenSecret.getOrCreate())
        return ZoneChangesResult(zoneID: z.zoneID, changes: changes, syncToken: token, moreComing: end < head)
    }

    /// Expires every token of a zone issued before now (`ck token expire`); returns the token
    /// of the new head, which stays valid.
    @discardableResult
    public func expireTokens(zone name: String) throws -> String {
        try requireWrite()
        let z = try changeFeedZone(name)
        let (head, epoch) = try z.withLock { () throws -> (Int64, Int64) in
            try z.history.expire()
            return (z.history.head(), try z.history.epoch())
        }
        return ChangeToken(kind: .zone, scopeKey: try zoneScopeKey(z), seq: head, epoch: epoch).encode(secret: try tokenSecret.getOrCreate())
    }

    /// The zone's current token, as `zones/list` returns it.
    public func currentToken(zone z: ZoneStore) throws -> String? {
        guard scope != .public, !z.zoneID.isDefault, z.existsOnDisk, let secret = try tokenSecret.existing() else { return nil }
        return ChangeToken(kind: .zone, scopeKey: try zoneScopeKey(z), seq: z.history.head(), epoch: try z.history.epoch()).encode(secret: secret)
    }
}
