import CKModel

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
    package var tokenSecret: TokenSecret { TokenSecret(paths: paths) }

    /// Which history a zone token names; each part encoded byte by byte, so the key is
    /// injective and `|` never appears inside a part.
    package func zoneScopeKey(_ z: ZoneStore) -> String {
        [address.container, address.environment.rawValue, scope.rawValue, z.zoneID.ownerRecordName, z.zoneID.zoneName, z.incarnation]
            .map { PathEncoding.component($0) }.joined(separator: "|")
    }

    /// Change feeds exist only for custom zones of the private and shared databases.
    package func changeFeedZone(_ name: String) throws -> ZoneStore {
        if scope == .public {
            throw CloudKitError(.badRequest, "the public database has no change feeds; CloudKit offers zone changes only in custom zones of the private and shared databases (poll with a query instead)", zoneID: zoneID(name))
        }
        if name == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "the default zone has no change feed; CloudKit offers zone changes only in custom zones", zoneID: zoneID(name)).with(.createCustomZone)
        }
        return try zone(name)
    }

    /// Checks a zone token: BAD_REQUEST when forged or foreign, CHANGE_TOKEN_EXPIRED when older
    /// than the retained history or from an earlier zone of the same name.
    package func checkZoneToken(_ raw: String, zone z: ZoneStore, head: Int64) throws -> ChangeToken {
        let t = try ChangeToken.decode(raw, secret: try tokenSecret.existing())
        guard t.kind == .zone else { throw CloudKitError(.badRequest, "this is a database change token, not a zone change token", zoneID: z.zoneID) }
        let mine = zoneScopeKey(z)
        if !t.scopeKey.sameBytes(mine) {
            let a = t.scopeKey.split(separator: "|", omittingEmptySubsequences: false), b = mine.split(separator: "|", omittingEmptySubsequences: false)
            if a.count == b.count && Array(a.dropLast()).elementsEqual(Array(b.dropLast()), by: { $0.utf8.elementsEqual($1.utf8) }) {
                throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' was deleted (or purged) and created again since", zoneID: z.zoneID).with(.refetchFromStart)
            }
            var other = a.count >= 5 ? "zone '\(Names.describe(PathEncoding.decodeSimple(String(a[4])) ?? String(a[4])))' of the \(a[2]) database" : "another zone"
            if a.count >= 5, b.count >= 5, !a[3].utf8.elementsEqual(b[3].utf8) { other = "another user's " + other }
            if a.count >= 5, b.count >= 5, !a[0].utf8.elementsEqual(b[0].utf8) || a[1] != b[1] { other += " of another container or environment" }
            throw CloudKitError(.badRequest, "change token belongs to \(other), not zone '\(Names.describe(z.zoneID.zoneName))' of the \(scope.rawValue) database", zoneID: z.zoneID)
        }
        let epoch = try z.history.epoch()
        if max(t.seq, t.origin ?? 0) > head || t.epoch > epoch { throw CloudKitError(.badRequest, "change token is from the future of zone '\(Names.describe(z.zoneID.zoneName))'", zoneID: z.zoneID) }
        if t.epoch < epoch {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' no longer retains history that old", zoneID: z.zoneID).with(.refetchFromStart)
        }
        // `ck gc` compacted the changes after the token's point (HistoryCompaction). The pages of
        // a fetch from scratch read on through what remains of them, as the first page did —
        // whether the fetch began after the compaction or before it: of what gc drops, a page
        // needs only the deletions (an update comes again at its latest state), so only a
        // dropped deletion after the token's point, of a record an earlier page may have
        // returned, expires it. Any other token from there is expired, as CloudKit's are.
        let kept = try z.history.retainedFrom() - 1
        if t.seq < kept, (t.origin ?? 0) < kept, try t.origin == nil || t.seq < z.history.deletionsDroppedThrough() {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' no longer retains history that old (its history was compacted)", zoneID: z.zoneID).with(.refetchFromStart)
        }
        return t
    }

    /// Fetches up to `limit` changed records after `since` (nil: from scratch), as CloudKit
    /// serves them: each record changed since the token once, at its current state, on the page
    /// of its latest change (LatestChanges); a record deleted since, as a tombstone. From
    /// scratch, a deletion is reported only to the device that created the record, or when it
    /// happened while the client paged (after the head where the fetch began, which the pages'
    /// tokens carry): Apple DTS, reference §5.4. Served from the history and the zone's files
    /// under a snapshot, so never half of a batch a writer has not finished committing. Cost:
    /// the entries the page reads, and a file per record it decides on — not the zone's size.
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
        let snap = try z.snapshot()
        let head = snap.head
        let token = try since.map { try checkZoneToken($0, zone: z, head: head) }
        let start = token?.seq ?? 0
        // A fetch from scratch began at the head of its first page.
        let origin = token == nil ? head : token!.origin
        let page = try z.history.latestChanges(HistoryEntry.self, after: start, through: head, limit: limit, skipCompacted: origin != nil) {
            try snap.laterChanges(of: $0, after: $1)
        }
        let sharedPage = try shared?.zoneChanges(page.entries, zone: z, snapshot: snap, start: start, origin: origin, limit: limit)
        let changes = try sharedPage?.changes
            ?? page.entries.compactMap { e in
                if let r = e.record { return .record(r) }
                return try reportsDeletion(e, in: z, origin: origin) ? .deleted(e.recordName) : nil
            }
        // A shared page that ends early, to carry a moved record's subtree within the limit.
        let end = sharedPage?.end ?? page.end
        // A fetch from scratch keeps its origin until its pages pass both it and the compacted
        // part (checkZoneToken). Raising it to the compacted part's end reports no other
        // deletion: gc keeps none of the deletions there.
        let kept = try z.history.retainedFrom() - 1
        let next = ChangeToken(kind: .zone, scopeKey: zoneScopeKey(z), seq: end, epoch: try z.history.epoch(),
                               origin: origin.flatMap { max($0, kept) > end ? max($0, kept) : nil })
        return ZoneChangesResult(zoneID: z.zoneID, changes: changes, syncToken: next.encode(secret: try tokenSecret.getOrCreate()),
                                 moreComing: page.moreComing || sharedPage?.end != nil)
    }

    /// Whether a feed reports a deletion (the latest change of its record): always after a
    /// token; from scratch — the client holds nothing from before the fetch began at `origin` —
    /// only when it happened after `origin` or this device created the record (reference §5.4).
    package func reportsDeletion(_ e: HistoryEntry, in z: ZoneStore, origin: Int64?) throws -> Bool {
        guard let o = origin, e.seq <= o else { return true }
        return try createdHere(e, in: z)
    }

    /// Whether the record a deletion ended was created by the caller on this device.
    package func createdHere(_ deletion: HistoryEntry, in z: ZoneStore) throws -> Bool {
        guard let me = caller.user?.userRecordName, let p = deletion.prev, let created = try z.history.entry(p)?.record?.created else { return false }
        return created.userRecordName.sameBytes(me) && created.deviceID.sameBytes(caller.deviceID)
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
