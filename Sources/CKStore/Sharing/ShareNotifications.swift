import CKJSON
import CKModel

/// Notifications for share participants: a commit to a zone holding shares fires the database
/// (and zone) subscriptions each participant saved in their shared database, on every device
/// of theirs but the one that made the change — when the change touches what is shared with
/// them (or the share itself, as when they are removed). A record that enters or leaves what
/// is shared with them carries its subtree (SharedSubtree): its descendants count as created
/// or deleted for them, so a zone subscription of their type fires.
/// Delivers a private zone's changes to the participants of its shares (ShareNotifications'
/// rule above), for the owner's database that committed them.
struct ShareNotifier {
    let db: Database

    package init(_ db: Database) {
        self.db = db
    }

    func deliverToShareParticipants(zone z: ZoneStore, changes: [RecordChange], through seq: Int64) throws {
        guard db.scope == .private, !z.zoneID.isDefault else { return }
        let names = try ShareRegistry(zone: z).shareNames()
        guard !names.isEmpty else { return }
        // The shares as this commit left them, whatever later commits did since.
        let snapshot = try ZoneSnapshot(z, at: seq)
        var cache: [NameKey: Record?] = [:]
        let lookup: (String) throws -> Record? = { n in
            if let r = cache[NameKey(n)] { return r }
            let r = try snapshot.record(named: n)
            cache[NameKey(n)] = .some(r)
            return r
        }
        // Who takes part now, or did before this commit changed a share.
        var participants = Set<String>()
        var shares: [ShareState] = []
        for n in names { if let r = try lookup(n), let s = try ShareState(r) { shares.append(s) } }
        for c in changes where (c.before ?? c.after)?.recordType == ShareInfo.recordType {
            if let b = c.before, let s = try ShareState(b) { shares.append(s) }
        }
        for s in shares {
            for p in s.participants where p.type != .owner && s.permission(of: p.userRecordName) != nil { participants.insert(p.userRecordName) }
        }
        let zoneName = z.zoneID.zoneName
        // Built on the first move between shares only (it reads the zone: SharedSubtree).
        var subtree = SharedSubtree(snapshot: snapshot, start: nil)
        for c in changes { subtree.given(c.recordName) }
        for user in participants.sorted() {
            let store = SubscriptionStore(databaseDirectory: db.paths.database(db.address.container, db.address.environment, .shared, user: user), scope: .shared)
            let subscriptions = try store.all(owner: user)
            guard !subscriptions.isEmpty else { continue }
            // The changes this participant may know of: shared with them before or after.
            var seen: [RecordChange] = []
            for c in changes {
                var visible = false
                for r in [c.after, c.before].compactMap({ $0 }) where try ShareVisibility.permission(user, on: r, lookup: lookup) != nil { visible = true }
                if !visible, let b = c.before, b.recordType == ShareInfo.recordType, let s = try ShareState(b), s.permission(of: user) != nil { visible = true }
                if visible { seen.append(c) }
            }
            // Carried changes matter only to a zone subscription of some record type: any other
            // fires on the moved record's own change already (and reading the zone costs).
            let byType = subscriptions.contains { $0.1.kind == .zone && $0.1.recordType != nil }
            var own = subtree
            for c in changes where byType {
                guard let move = try subtreeMove(c, user: user, lookup: lookup) else { continue }
                for d in try own.carried(move.roots, includingRoots: move.includingRoots, everything: move.everything) {
                    let shared = try ShareVisibility.permission(user, on: d, lookup: lookup) != nil
                    guard shared == move.entered else { continue }
                    seen.append(RecordChange(kind: move.entered ? .created : .deleted, recordName: d.recordName, seq: c.seq,
                                             before: move.entered ? nil : d, after: move.entered ? d : nil,
                                             userRecordName: c.userRecordName, deviceID: c.deviceID, timestamp: c.timestamp))
                }
            }
            if own.indexed { subtree = own.unused }
            var items: [(origin: RecordChange, item: NotificationInbox.Pending)] = []
            for (_, sub, created) in subscriptions {
                for c in seen where c.timestamp >= created {
                    switch sub.kind {
                    case .database:
                        items.append((c, .init(notification: sharedNotification(sub, type: "database"), coalesceKey: "database|shared|" + PathEncoding.component(sub.subscriptionID), seq: c.seq)))
                    case .zone:
                        guard sub.fires(on: c, zone: zoneName) != nil else { continue }
                        var n = sharedNotification(sub, type: "recordZone")
                        n["zoneID"] = z.zoneID.json
                        items.append((c, .init(notification: n, coalesceKey: "recordZone|shared|" + PathEncoding.component(sub.subscriptionID), seq: c.seq)))
                    case .query:
                        continue
                    }
                }
            }
            guard !items.isEmpty else { continue }
            let source = (key: ["zone", "shared", PathEncoding.component(user), PathEncoding.component(db.ownerRecordName), PathEncoding.component(zoneName), z.incarnation]
                .joined(separator: "|"), seq: seq)
            try db.notifications.deliver(to: user, source: source, zone: zoneName) { device in
                items.filter { !($0.origin.userRecordName == user && PathEncoding.component($0.origin.deviceID) == device) }.map(\.item)
            }
        }
    }

    /// Whether change `c` moved a subtree into or out of what is shared with `user` (as
    /// SharedDatabase's feed decides it, between the versions before and after the commit).
    private func subtreeMove(_ c: RecordChange, user: String, lookup: (String) throws -> Record?) throws
        -> (roots: [String], includingRoots: Bool, everything: Bool, entered: Bool)? {
        if (c.after ?? c.before)?.recordType == ShareInfo.recordType {
            let then = try c.before.flatMap { try ShareState($0) }?.permission(of: user) != nil
            let nowState = try c.after.flatMap { try ShareState($0) }
            let now = nowState?.permission(of: user) != nil
            let state = try nowState ?? c.before.flatMap { try ShareState($0) }
            guard then != now, let state else { return nil }
            if c.recordName.sameBytes(ShareInfo.zoneWideName) { return ([], true, true, now) }
            guard let root = state.rootRecordName else { return nil }
            return ([root], true, false, now)
        }
        guard let b = c.before else { return nil }  // a new record has no subtree (as the feed: SharedDatabase)
        if let a = c.after, a.parent == b.parent, a.share == b.share { return nil }
        let now = try c.after.map { try ShareVisibility.permission(user, on: $0, lookup: lookup) != nil } ?? false
        let then = try c.before.map { try ShareVisibility.permission(user, on: $0, lookup: lookup) != nil } ?? false
        guard now != then else { return nil }
        return ([c.recordName], false, false, now)
    }

    private func sharedNotification(_ sub: Subscription, type: String) -> [String: JSONValue] {
        var n: [String: JSONValue] = [
            "notificationType": .string(type), "subscriptionID": .string(sub.subscriptionID),
            "containerIdentifier": .string(db.address.container), "databaseScope": .string(DatabaseScope.shared.rawValue),
            "isPruned": false, "timestamp": .int(db.clock.now()),
        ]
        if let a = sub.alertBody { n["alertBody"] = .string(a) }
        if sub.shouldSendContentAvailable { n["contentAvailable"] = true }
        return n
    }
}
