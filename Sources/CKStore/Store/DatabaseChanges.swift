import CKModel

/// `changes/database`: which zones were created, written, deleted or purged since a token, from
/// the database's own history (`history.log` beside `zones/`), one entry per zone create,
/// commit, delete or purge (see DatabaseIntent): each zone once, as its latest change, on the
/// page of that change (LatestChanges), as record changes are.
extension ChangeFeed {
    package func database(since: String?, limit: Int = Limits.resultsPerPage) throws -> DatabaseChangesResult {
        try db.requireRead()
        if db.scope == .public {
            throw CloudKitError(.badRequest, "the public database has no change feed; CloudKit offers database changes only for the private and shared databases")
        }
        if let shared = db.shared { return try shared.databaseChanges(since: since, limit: limit) }
        let tokens = db.tokens
        let h = db.databaseHistory
        let head = try h.head()
        var start: Int64 = 0
        if let s = since { start = try tokens.checkDatabase(s, head: head) }
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
            DatabaseChangesResult.Zone(zoneID: db.zoneID($0.zoneName), deleted: $0.op == .delete || $0.op == .purge, purged: $0.op == .purge)
        }
        let token = ChangeToken(kind: .database, scopeKey: tokens.databaseScopeKey, seq: page.end).encode(secret: try tokens.secret.getOrCreate())
        return DatabaseChangesResult(zones: zones, syncToken: token, moreComing: page.moreComing)
    }
}
