import CKJSON
import CKModel

/// The shared database: a participant's view onto the zones other users shared with them.
///
/// Nothing is copied. A share record lives in its owner's zone (the truth about who takes part
/// and with what permission); each owner's private database keeps, per zone, the names of its
/// share records (`shares/<zone>.json`, written under the zone's lock with the commit that
/// makes or deletes one). A participant's shared database lists each zone holding a share
/// they accepted (zoneID with the owner's `ownerRecordName`); reads go to the owner's zone
/// through a visibility filter, writes into it as the participant (with the permission
/// check of ShareWriter), under the owner's locks, into the owner's history — so the owner's
/// feeds and subscriptions see them.

/// A zone shared with the caller: the owner's zone, and the shares in it the caller takes part in.
struct SharedZone {
    package var owner: String
    package var zone: ZoneStore
    package var shares: [ShareState]
    package var key: String { SharedZone.key(owner: owner, zone: zone.zoneID.zoneName) }
    package static func key(owner: String, zone: String) -> String { PathEncoding.component(owner) + "|" + PathEncoding.component(zone) }
}

/// The participant's shared database: a view over the participant's Database onto the zones
/// other users shared with them (SharedDatabaseView). It holds what it read for one command:
/// the zones shared with the caller, and records read to decide what they may see.
package final class SharedDatabase: SharedDatabaseView {
    /// The participant's shared database (scope `.shared`, no zones of its own).
    unowned let db: Database
    private var cachedZones: [SharedZone]?
    /// Records of shared zones by zone key and name (nil: no such record).
    private var cachedRecords: [String: Record?] = [:]

    package init(participant db: Database) {
        self.db = db
    }

    /// Reads the zones shared with the caller afresh (after they accepted a share).
    package func forgetSharedZones() { cachedZones = nil }

    // MARK: finding shares

    /// The zones shared with the caller (those holding a share they accepted), by zone name
    /// then owner.
    func sharedZones() throws -> [SharedZone] {
        if let z = cachedZones { return z }
        guard let me = db.caller.user?.userRecordName else { return [] }
        var byKey: [String: SharedZone] = [:]
        for loc in try ShareLocation.all(paths: db.paths, container: db.address.container, environment: db.address.environment, clock: db.clock) where loc.owner != me && loc.state.permission(of: me) != nil {
            let key = SharedZone.key(owner: loc.owner, zone: loc.zoneName)
            if byKey[key] == nil {
                guard case .present(let z) = try ZoneStore.load(directory: DataPaths.zone(database: db.paths.database(db.address.container, db.address.environment, .private, user: loc.owner), zoneName: loc.zoneName),
                                                                zoneID: loc.zoneID) else { continue }
                byKey[key] = SharedZone(owner: loc.owner, zone: z, shares: [])
            }
            byKey[key]!.shares.append(loc.state)
        }
        let zones = byKey.values.sorted { (NameKey($0.zone.zoneID.zoneName), $0.owner) < (NameKey($1.zone.zoneID.zoneName), $1.owner) }
        cachedZones = zones
        return zones
    }

    /// The shared zone a name means; BAD_REQUEST when two owners share zones of that name.
    func sharedZone(named name: String) throws -> SharedZone? {
        let matches = try sharedZones().filter { $0.zone.zoneID.zoneName.sameBytes(name) }
        if matches.count > 1 {
            throw CloudKitError(.badRequest, "zone name '\(Names.describe(name))' is shared with this user by \(matches.count) owners (\(matches.map(\.owner).joined(separator: ", "))); ck addresses shared zones by name, so one of the shares must be left first")
        }
        return matches.first
    }

    /// Before the caller accepts `loc`: BAD_REQUEST when another owner already shares a zone
    /// of the same name with them (which ck, addressing shared zones by name, could not tell
    /// apart; CloudKit could, by ownerRecordName).
    package func refuseZoneNameClash(_ loc: ShareLocation) throws {
        guard let me = db.me, loc.owner != me else { return }
        cachedZones = nil
        guard let other = try sharedZones().first(where: { $0.owner != loc.owner && $0.zone.zoneID.zoneName.sameBytes(loc.zoneName) }) else { return }
        let who = try AccountStore(paths: db.paths, clock: db.clock).user(recordName: other.owner)?.appleID ?? other.owner
        throw CloudKitError(.badRequest, "zone '\(Names.describe(loc.zoneName))' of the shared database already holds a share of \(who); ck addresses shared zones by name, so it cannot also serve this owner's zone of the same name: leave that share first", zoneID: loc.zoneID)
            .with(.leaveShare)
    }

    // MARK: the view (SharedDatabaseView)

    package func zonePresence(_ name: String) throws -> ZoneStore.Presence {
        guard let z = try sharedZone(named: name) else { return .absent }
        return .present(z.zone)
    }

    package func zoneOwner(_ name: String) -> String? {
        (try? sharedZone(named: name))?.owner
    }

    package func zones() throws -> [ZoneStore] {
        try sharedZones().map(\.zone)
    }

    /// For a write to the shared database: the owner's database to write into.
    package func ownerDatabase(forZone name: String) throws -> Database {
        try db.ownerView(owner: db.zone(name).zoneID.ownerRecordName)
    }

    /// A record of a shared zone (cached for the command).
    func sharedRecord(_ z: SharedZone, _ name: String) throws -> Record? {
        let key = z.key + "|" + PathEncoding.component(name)
        if let r = cachedRecords[key] { return r }
        let r = try z.zone.record(named: name)
        cachedRecords[key] = .some(r)
        return r
    }

    /// In the shared database: whether the caller may see a record (nil elsewhere).
    package func canRead(_ r: Record) throws -> Bool {
        guard let me = db.caller.user?.userRecordName,
              let z = try sharedZones().first(where: { $0.owner == r.zoneID.ownerRecordName && $0.zone.zoneID.zoneName.sameBytes(r.zoneID.zoneName) })
        else { return false }
        return try ShareVisibility.permission(me, on: r) { try sharedRecord(z, $0) } != nil
    }

    /// In the shared database, a page of a zone's latest changes (`entries`, from `start`) as
    /// the caller may see them: a record shared with them; as a tombstone, a record deleted or
    /// no longer shared with them that they may hold — one shared at the token, or whose version
    /// the change ended was — and from scratch (a fetch that began at `origin`) only the
    /// deletions CloudKit reports then (`reportsDeletion`); nothing about the owner's other
    /// records. Nil outside the shared database.
    ///
    /// A record that enters or leaves what is shared with the caller after their token (moved
    /// under a shared record or away, deleted, or its share gained or lost them) carries its
    /// subtree with it: the descendants it has now that did not change since the token come
    /// with it, as records or tombstones (SharedSubtree), on its page. A page ends early
    /// (`end`, the seq of its last entry kept) rather than exceed `limit` that way; an entry
    /// whose subtree alone exceeds it comes whole on a page of its own.
    package func zoneChanges(_ entries: [HistoryEntry], zone z: ZoneStore, snapshot snap: ZoneSnapshot, start: Int64,
                             origin: Int64?, limit: Int) throws -> (changes: [ZoneChangesResult.RecordChange], end: Int64?) {
        guard let me = db.caller.user?.userRecordName,
              let shared = try sharedZones().first(where: { $0.owner == z.zoneID.ownerRecordName && $0.zone.zoneID.zoneName.sameBytes(z.zoneID.zoneName) })
        else { return ([], nil) }
        let lookup: (String) throws -> Record? = { try self.sharedRecord(shared, $0) }
        func visible(_ r: Record?) throws -> Bool { try r.map { try ShareVisibility.permission(me, on: $0, lookup: lookup) != nil } ?? false }
        // The version at the token, where the history still holds it (a fetch from scratch
        // reads on through what `ck gc` compacted, and holds nothing from before it began).
        let tokenRetained = start > 0 && origin == nil
        // A move into or out of the share is carried: after a token, one since the token; in a
        // fetch from scratch, one made after the fetch began (`origin`), whose subtree earlier
        // pages gave as it was then. What those pages gave is what is unchanged since `start`.
        let movesAfterOrigin = try origin != nil && start > 0 && origin! >= z.history.retainedFrom() - 1
        var subtree = SharedSubtree(snapshot: snap, start: start)
        var groups: [(seq: Int64, changes: [ZoneChangesResult.RecordChange])] = []
        for e in entries {
            var out: [ZoneChangesResult.RecordChange] = []
            func own() throws -> ZoneChangesResult.RecordChange? {
                if let r = e.record, try visible(r) { return .record(r) }
                if origin != nil, e.op == .save, e.seq <= origin! { return nil }
                guard try db.changes.reportsDeletion(e, in: z, origin: origin) else { return nil }
                let ended = try e.prev.flatMap { try z.history.entry($0)?.record }
                if try visible(ended) { return .deleted(e.recordName) }
                if tokenRetained, try visible(z.version(of: e.recordName, at: start, in: snap)?.record) { return .deleted(e.recordName) }
                return nil
            }
            if let c = try own() { out.append(c) }
            subtree.given(e.recordName)
            if tokenRetained || (movesAfterOrigin && e.seq > origin!),
               let move = try membershipChange(e, me: me, zone: z, snapshot: snap, then: origin ?? start, visible: visible) {
                for d in try subtree.carried(move.roots, includingRoots: move.includingRoots, everything: move.everything) {
                    if move.entered, try visible(d) { out.append(.record(d)) }
                    if !move.entered, try !visible(d) { out.append(.deleted(d.recordName)) }
                }
            }
            groups.append((e.seq, out))
        }
        var kept = 0, total = 0
        for g in groups {
            if kept > 0 && total + g.changes.count > limit { break }
            total += g.changes.count
            kept += 1
        }
        return (groups.prefix(kept).flatMap(\.changes), kept < groups.count ? groups[kept - 1].seq : nil)
    }

    /// Whether entry `e` moved what is shared with `me` between `then` (a token's point, or
    /// where a fetch from scratch began) and now, and which subtree: a record whose parent or
    /// share changed (or that was deleted) and whose visibility differs then and now; a share whose permission for `me` differs
    /// (its root's subtree, or with a zone-wide share the whole zone). Nil: nothing moved.
    private func membershipChange(_ e: HistoryEntry, me: String, zone z: ZoneStore, snapshot snap: ZoneSnapshot, then point: Int64,
                                  visible: (Record?) throws -> Bool) throws -> (roots: [String], includingRoots: Bool, everything: Bool, entered: Bool)? {
        let prev = try e.prev.flatMap { try z.history.entry($0)?.record }
        let subject = e.record ?? prev
        if subject?.recordType == ShareInfo.recordType {
            let then = try z.version(of: e.recordName, at: point, in: snap)?.record.flatMap { try ShareState($0) }?.permission(of: me) != nil
            let nowState = try e.record.flatMap { try ShareState($0) }
            let now = nowState?.permission(of: me) != nil
            let state = try nowState ?? prev.flatMap { try ShareState($0) }
            guard then != now, let state else { return nil }
            if e.recordName.sameBytes(ShareInfo.zoneWideName) { return ([], true, true, now) }
            guard let root = state.rootRecordName else { return nil }
            return ([root], true, false, now)
        }
        // Only a change of the record's own place (parent, share, deletion) moves its subtree;
        // an ancestor's move is the ancestor's own entry. A record just made has no subtree to
        // carry (a child saved before its parent existed is the exception ck does not look for:
        // it would cost a read of the zone for every new record).
        guard let p = prev else { return nil }
        if let r = e.record, r.parent == p.parent, r.share == p.share { return nil }
        let now = try visible(e.record)
        let then = try visible(try z.version(of: e.recordName, at: point, in: snap)?.record)
        guard now != then else { return nil }
        return ([e.recordName], false, false, now)
    }

    // MARK: bookmarks

    /// In the shared database a zone's bookmarks belong to the participant, not beside the
    /// owner's zone: `shared/<user>/bookmarks/<owner>/<zone>` (nil elsewhere).
    package func bookmarkDirectory(_ zone: String) -> String {
        db.directory + "/bookmarks/" + PathEncoding.component(zoneOwner(zone) ?? "_") + "/" + PathEncoding.component(zone)
    }

    /// In the shared database: whether the zone is shared with the caller (so its bookmark may be saved).
    package func bookmarkable(_ zone: String) throws -> Bool {
        try sharedZone(named: zone) != nil
    }
}

extension Database {
    /// The participant's shared database as its view (nil elsewhere): what the share entries
    /// of the API ask of it beyond what the store's core does.
    package var sharedDatabase: SharedDatabase? { shared as? SharedDatabase }
}
