import CKModel

/// A database's change feeds (`changes/zone`, `changes/database`): read from the histories,
/// paged, and followed page after page (ChangeFeedPages). Reached as `db.changes`.
package struct ChangeFeed {
    let db: Database

    /// Change feeds exist only for custom zones of the private and shared databases.
    func feedZone(_ name: String) throws -> ZoneStore {
        if db.scope == .public {
            throw CloudKitError(.badRequest, "the public database has no change feeds; CloudKit offers zone changes only in custom zones of the private and shared databases (poll with a query instead)", zoneID: db.zoneID(name))
        }
        if name == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "the default zone has no change feed; CloudKit offers zone changes only in custom zones", zoneID: db.zoneID(name)).with(.createCustomZone)
        }
        return try db.zone(name)
    }

    /// Fetches up to `limit` changed records after `since` (nil: from scratch), as CloudKit
    /// serves them: each record changed since the token once, at its current state, on the page
    /// of its latest change (LatestChanges); a record deleted since, as a tombstone. From
    /// scratch, a deletion is reported only to the device that created the record, or when it
    /// happened while the client paged (after the head where the fetch began, which the pages'
    /// tokens carry): Apple DTS, reference §5.4. Served from the history and the zone's files
    /// under a snapshot, so never half of a batch a writer has not finished committing. Cost:
    /// the entries the page reads, and a file per record it decides on — not the zone's size.
    package func zone(_ name: String, since: String?, limit: Int = Limits.resultsPerPage) throws -> ZoneChangesResult {
        for _ in 0..<3 {
            let z = try feedZone(name)
            let page = try zonePage(z, since: since, limit: limit)
            // Read from the zone the token stands for, not one deleted (and made again) meanwhile.
            if case .present(let now) = try db.zonePresence(name), now.incarnation == z.incarnation { return page }
        }
        throw CloudKitError(.zoneNotFound, "zone '\(Names.describe(name))' was deleted while its changes were read", zoneID: db.zoneID(name))
    }

    private func zonePage(_ z: ZoneStore, since: String?, limit: Int) throws -> ZoneChangesResult {
        let tokens = db.tokens
        let snap = try z.snapshot()
        let head = snap.head
        let token = try since.map { try tokens.checkZone($0, zone: z, head: head) }
        let start = token?.seq ?? 0
        // A fetch from scratch began at the head of its first page.
        let origin = token == nil ? head : token!.origin
        let page = try z.history.latestChanges(HistoryEntry.self, after: start, through: head, limit: limit, skipCompacted: origin != nil) {
            try snap.laterChanges(of: $0, after: $1)
        }
        let sharedPage = try db.shared?.zoneChanges(page.entries, zone: z, snapshot: snap, start: start, origin: origin, limit: limit)
        let changes = try sharedPage?.changes
            ?? page.entries.compactMap { e in
                if let r = e.record { return .record(r) }
                return try reportsDeletion(e, in: z, origin: origin) ? .deleted(e.recordName) : nil
            }
        // A shared page that ends early, to carry a moved record's subtree within the limit.
        let end = sharedPage?.end ?? page.end
        // A fetch from scratch keeps its origin until its pages pass both it and the compacted
        // part (ChangeTokens.checkZone). Raising it to the compacted part's end reports no other
        // deletion: gc keeps none of the deletions there.
        let kept = try z.history.retainedFrom() - 1
        let next = ChangeToken(kind: .zone, scopeKey: tokens.zoneScopeKey(z), seq: end, epoch: try z.history.epoch(),
                               origin: origin.flatMap { max($0, kept) > end ? max($0, kept) : nil })
        return ZoneChangesResult(zoneID: z.zoneID, changes: changes, syncToken: next.encode(secret: try tokens.secret.getOrCreate()),
                                 moreComing: page.moreComing || sharedPage?.end != nil)
    }

    /// Whether a feed reports a deletion (the latest change of its record): always after a
    /// token; from scratch — the client holds nothing from before the fetch began at `origin` —
    /// only when it happened after `origin` or this device created the record (reference §5.4).
    func reportsDeletion(_ e: HistoryEntry, in z: ZoneStore, origin: Int64?) throws -> Bool {
        guard let o = origin, e.seq <= o else { return true }
        return try createdHere(e, in: z)
    }

    /// Whether the record a deletion ended was created by the caller on this device.
    private func createdHere(_ deletion: HistoryEntry, in z: ZoneStore) throws -> Bool {
        guard let me = db.caller.user?.userRecordName, let p = deletion.prev, let created = try z.history.entry(p)?.record?.created else { return false }
        return created.userRecordName.sameBytes(me) && created.deviceID.sameBytes(db.caller.deviceID)
    }

    /// Expires every token of a zone issued before now (`ck token expire`); returns the token
    /// of the new head, which stays valid.
    @discardableResult
    package func expireTokens(zone name: String) throws -> String {
        try db.requireWrite()
        if db.scope == .shared { throw CloudKitError(.badRequest, "a shared zone's history belongs to its owner; expire its tokens in their private database", zoneID: db.zoneID(name)) }
        _ = try feedZone(name)
        let env = try db.environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try db.lockZone(name)
        defer { lock.unlock() }
        let z = try feedZone(name)
        try z.history.expire()
        return try db.tokens.head(of: z)
    }
}

extension Database {
    package var changes: ChangeFeed { ChangeFeed(db: self) }
}
