import CKModel

/// `changes/database`: which zones were created, written, deleted or purged since a token, from
/// the database's own history (`history.log` beside `zones/`), one entry per zone create,
/// commit, delete or purge (see DatabaseIntent): each zone once, as its latest change, on the
/// page of that change (LatestChanges), as record changes are.
public struct DatabaseChangesResult {
    public struct Zone {
        public var zoneID: ZoneID
        /// Deleted (or purged) as of the returned token.
        public var deleted: Bool
        /// Purged as of the returned token (then `deleted` too): the client drops its cache
        /// of the zone.
        public var purged: Bool
    }
    /// Each zone changed, in the order of its latest change.
    public var zones: [Zone]
    public var syncToken: String
    public var moreComing: Bool
}

extension Database {
    package var databaseScopeKey: String {
        [address.container, address.environment.rawValue, scope.rawValue, ownerRecordName]
            .map { PathEncoding.component($0) }.joined(separator: "|")
    }

    /// Checks a database token: BAD_REQUEST when forged, foreign or a zone token,
    /// CHANGE_TOKEN_EXPIRED when older than the retained history; its seq otherwise.
    package func checkDatabaseToken(_ raw: String, head: Int64) throws -> Int64 {
        let t = try ChangeToken.decode(raw, secret: try tokenSecret.existing())
        guard t.kind == .database else { throw CloudKitError.badRequest("this is a zone change token, not a database change token") }
        guard t.scopeKey.sameBytes(databaseScopeKey) else {
            throw CloudKitError.badRequest("change token belongs to another database, not the \(scope.rawValue) database of this user and container")
        }
        if t.seq > head { throw CloudKitError.badRequest("change token is from the future of this database") }
        if t.epoch < (try databaseHistory.epoch()) {
            throw CloudKitError(.changeTokenExpired, "change token expired: the database no longer retains history that old").with(.refetchFromStart)
        }
        return t.seq
    }

    public func databaseChanges(since: String?, limit: Int = Limits.resultsPerPage) throws -> DatabaseChangesResult {
        try requireRead()
        if scope == .public {
            throw CloudKitError(.badRequest, "the public database has no change feed; CloudKit offers database changes only for the private and shared databases")
        }
        if let shared { return try shared.databaseChanges(since: since, limit: limit) }
        let h = databaseHistory
        let head = try h.head()
        var start: Int64 = 0
        if let s = since { start = try checkDatabaseToken(s, head: head) }
        // Whether a zone changed again after a window is read from the history itself: a
        // database holds few zones (at most 1,000) but an entry per commit, so the rest of the
        // range is read once per page, for all its windows. A page costs O(entries from its token
        // to the head); a fetch from scratch is at most (changed zones / limit) pages.
        var laterChange: [NameKey: Int64]?
        let page = try h.latestChanges(DatabaseHistoryEntry.self, after: start, through: head, limit: limit) { candidates, windowEnd in
            if laterChange == nil {
                var m: [NameKey: Int64] = [:]
                try h.forEachDatabaseEntry(after: windowEnd, through: head) { m[$0.key] = $0.seq; return true }
                laterChange = m
            }
            return candidates.map { c in laterChange![c.key].flatMap { $0 > c.seq ? $0 : nil } }
        }
        let zones = page.entries.map {
            DatabaseChangesResult.Zone(zoneID: zoneID($0.zoneName), deleted: $0.op == .delete || $0.op == .purge, purged: $0.op == .purge)
        }
        let token = ChangeToken(kind: .database, scopeKey: databaseScopeKey, seq: page.end).encode(secret: try tokenSecret.getOrCreate())
        return DatabaseChangesResult(zones: zones, syncToken: token, moreComing: page.moreComing)
    }
}
