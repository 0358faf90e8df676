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

    /// Which history a zone token names; each part encoded byte by byte, so the key is
    /// injective and `|` never appears inside a part.
    func zoneScopeKey(_ z: ZoneStore) -> String {
        [address.container, address.environment.rawValue, scope.rawValue, z.zoneID.ownerRecordName, z.zoneID.zoneName, z.incarnation]
            .map { PathEncoding.component($0) }.joined(separator: "|")
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
    func checkZoneToken(_ raw: String, zone z: ZoneStore, head: Int64) throws -> Int64 {
        let t = try ChangeToken.decode(raw, secret: try tokenSecret.existing())
        guard t.kind == .zone else { throw CloudKitError(.badRequest, "this is a database change token, not a zone change token", zoneID: z.zoneID) }
        let mine = zoneScopeKey(z)
        if !t.scopeKey.sameBytes(mine) {
            let a = t.scopeKey.split(separator: "|", omittingEmptySubsequences: false), b = mine.split(separator: "|", omittingEmptySubsequences: false)
            if a.count == b.count && Array(a.dropLast()).elementsEqual(Array(b.dropLast()), by: { $0.utf8.elementsEqual($1.utf8) }) {
                throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' was deleted (or purged) and created again since; fetch from the start", zoneID: z.zoneID)
            }
            var other = a.count >= 5 ? "zone '\(Names.describe(PathEncoding.decodeSimple(String(a[4])) ?? String(a[4])))' of the \(a[2]) database" : "another zone"
            if a.count >= 5, b.count >= 5, !a[3].utf8.elementsEqual(b[3].utf8) { other = "another user's " + other }
            if a.count >= 5, b.count >= 5, !a[0].utf8.elementsEqual(b[0].utf8) || a[1] != b[1] { other += " of another container or environment" }
            throw CloudKitError(.badRequest, "change token belongs to \(other), not zone '\(Names.describe(z.zoneID.zoneName))' of the \(scope.rawValue) database", zoneID: z.zoneID)
        }
        let epoch = try z.history.epoch()
        if t.seq > head || t.epoch > epoch { throw CloudKitError(.badRequest, "change token is from the future of zone '\(Names.describe(z.zoneID.zoneName))'", zoneID: z.zoneID) }
        if t.epoch < epoch {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' no longer retains history that old; fetch from the start", zoneID: z.zoneID)
        }
        // `ck gc` compacted the changes after the token's point (HistoryCompaction).
        if t.seq < (try z.history.retainedFrom()) - 1 {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' no longer retains history that old (compacted by 'ck gc'); fetch from the start", zoneID: z.zoneID)
        }
        return t.seq
    }

    /// Fetches up to `limit` changed records after `since` (nil: from the start), served from
    /// the history itself: the returned token names a point in the history, and each record is
    /// returned as it was at that point — never a newer or older version, never a record a
    /// concurrent commit has not finished. Cost: the entries read, not the zone's size.
    public func zoneChanges(zone name: String, since: String?, limit: Int = Limits.resultsPerPage) throws -> ZoneChangesResult {
        for _ in 0..<3 {
            let z = try changeFeedZone(name)
            let page = try zoneChanges(z, since: since, limit: limit)
            // Read from the zone the token stands for, not one deleted (and made again) meanwhile.
            if case .present(let now) = try zonePresence(name), now.incarnation == z.incarnation { return page }
        }
        throw CloudKitError(.zoneNotFound, "zone '\(Names.describe(name))' was deleted while its changes were read", zoneID: zoneID(name))
    }

    private func zoneChanges(_ z: ZoneStore, since: String?, limit: Int) throws -> ZoneChangesResult {
        let head = try z.history.head()
        var start: Int64 = 0
        if let s = since { start = try checkZoneToken(s, zone: z, head: head) }
        var order: [NameKey] = []
        var latest: [NameKey: HistoryEntry] = [:]
        var end = start
        try z.history.forEachEntry(after: start, through: head) { e in
            if latest[e.key] == nil {
                if order.count == limit { return false }
                order.append(e.key)
            }
            latest[e.key] = e
            end = e.seq
            return true
        }
        let changes: [ZoneChangesResult.RecordChange] = order.compactMap { k in
            let e = latest[k]!
            if let r = e.record { return .record(r) }
            // From the start there is nothing to forget: records deleted by then are left out.
            return since == nil ? nil : .deleted(k.string)
        }
        // The shared database shows a participant only what is shared with them.
        let shown = try sharedZoneChanges(changes, latest: latest, zone: z, since: since == nil ? nil : start)
        let token = ChangeToken(kind: .zone, scopeKey: zoneScopeKey(z), seq: end, epoch: try z.history.epoch()).encode(secret: try tokenSecret.getOrCreate())
        return ZoneChangesResult(zoneID: z.zoneID, changes: shown, syncToken: token, moreComing: end < head)
    }

    /// Expires every token of a zone issued before now (`ck token expire`); returns the token
    /// of the new head, which stays valid.
    @discardableResult
    public func expireTokens(zone name: String) throws -> String {
        try requireWrite()
        if scope == .shared { throw CloudKitError(.badRequest, "a shared zone's history belongs to its owner; expire its tokens in their private database", zoneID: zoneID(name)) }
        _ = try changeFeedZone(name)
        let env = try environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try lockZone(name)
        defer { lock.unlock() }
        let z = try changeFeedZone(name)
        try z.history.expire()
        return ChangeToken(kind: .zone, scopeKey: zoneScopeKey(z), seq: try z.history.head(), epoch: try z.history.epoch()).encode(secret: try tokenSecret.getOrCreate())
    }

    /// The zone's current token, as `zones/list` returns it.
    public func currentToken(zone z: ZoneStore) throws -> String? {
        guard scope != .public, !z.zoneID.isDefault, !z.incarnation.isEmpty, let secret = try tokenSecret.existing() else { return nil }
        return ChangeToken(kind: .zone, scopeKey: zoneScopeKey(z), seq: try z.history.head(), epoch: try z.history.epoch()).encode(secret: secret)
    }
}
