import CKJSON
import CKModel

/// Turns committed changes into notifications for every subscription they match, delivered to
/// each device of the subscribing user — except the device that made the change, as CloudKit
/// leaves out the originating device — and only about records the subscriber may read. Also
/// where a device's own inbox is found. Reached as `db.notifications`.
package struct Notifications {
    let db: Database

    /// The calling device's notifications (`ck notifications`).
    package func inbox() throws -> NotificationInbox {
        let user = try db.caller.requireUser(for: "receiving notifications")
        return inbox(user: user.userRecordName, device: db.caller.deviceID)
    }

    /// Makes the calling device known for notifications, as registering for pushes does.
    package func register() throws { try inbox().register() }

    func inbox(user: String, device: String) -> NotificationInbox {
        NotificationInbox(directory: db.paths.notifications(db.address.container, db.address.environment, user: user) + "/" + PathEncoding.component(device))
    }

    /// After a commit to one zone, for its changes up to history entry `seq`. Redoing it after
    /// a crash delivers nothing twice: each inbox remembers how far it has this zone's history.
    func deliver(zone z: ZoneStore, changes: [RecordChange], through seq: Int64) throws {
        guard !changes.isEmpty else { return }
        // Participants of the zone's shares hear of it through their shared databases.
        try ShareNotifier(db).deliverToShareParticipants(zone: z, changes: changes, through: seq)
        let subscriptions = try db.subscriptions.store.all(owner: db.ownerRecordName)
        guard !subscriptions.isEmpty else { return }
        let zoneName = z.zoneID.zoneName
        // Per subscriber: the notifications, each with the device that made its change.
        var byOwner: [String: [(origin: RecordChange, item: NotificationInbox.Pending)]] = [:]
        var firedOnce: [(String, String)] = []
        for (owner, sub, created) in subscriptions {
            // Only changes committed since the subscription was saved.
            let changes = changes.filter { $0.timestamp >= created }
            var items: [(RecordChange, NotificationInbox.Pending)] = []
            switch sub.kind {
            case .database:
                if z.zoneID.isDefault { continue }
                for c in changes { items.append((c, .init(notification: notification(sub, type: "database"), coalesceKey: coalesceKey("database", sub), seq: c.seq, badges: sub.badges))) }
            case .zone:
                for c in changes where sub.fires(on: c, zone: zoneName) != nil {
                    var n = notification(sub, type: "recordZone")
                    n["zoneID"] = z.zoneID.json
                    items.append((c, .init(notification: n, coalesceKey: coalesceKey("recordZone", sub), seq: c.seq, badges: sub.badges)))
                }
            case .query:
                for c in changes {
                    guard let event = sub.fires(on: c, zone: zoneName), let subject = c.after ?? c.before,
                          try subscriberMayRead(subject, owner: owner) else { continue }
                    var n = notification(sub, type: "query", record: subject)
                    n["zoneID"] = z.zoneID.json
                    n["recordName"] = .string(c.recordName)
                    n["queryNotificationReason"] = .string(["create": "recordCreated", "update": "recordUpdated", "delete": "recordDeleted"][event.rawValue]!)
                    items.append((c, .init(notification: n, coalesceKey: nil, seq: c.seq, badges: sub.badges)))
                    if sub.firesOnce { break }
                }
            }
            guard !items.isEmpty else { continue }
            byOwner[owner, default: []] += items.map { (origin: $0.0, item: $0.1) }
            if sub.firesOnce { firedOnce.append((owner, sub.subscriptionID)) }
        }
        let source = (key: ["zone", db.scope.rawValue, PathEncoding.component(db.ownerRecordName), PathEncoding.component(zoneName), z.incarnation]
            .joined(separator: "|"), seq: seq)
        for (owner, items) in byOwner.sorted(by: { $0.key < $1.key }) {
            try deliver(to: owner, source: source, zone: zoneName) { device in
                items.filter { !($0.origin.userRecordName == owner && PathEncoding.component($0.origin.deviceID) == device) }.map(\.item)
            }
        }
        for (owner, id) in firedOnce { _ = try db.subscriptions.store.delete(owner: owner, id: id) }
    }

    /// After a custom zone is created or deleted (database history entry `entry`): database
    /// subscriptions fire. Redone after a crash, it delivers nothing twice.
    func deliverZoneEvent(_ zoneName: String, entry: Int64) throws {
        guard db.scope != .public, !zoneName.sameBytes(ZoneID.defaultZoneName) else { return }
        let source = (key: ["database", db.scope.rawValue, PathEncoding.component(db.ownerRecordName)].joined(separator: "|"), seq: entry)
        var byOwner: [String: [NotificationInbox.Pending]] = [:]
        for (owner, sub, _) in try db.subscriptions.store.all(owner: db.ownerRecordName) where sub.kind == .database {
            byOwner[owner, default: []].append(NotificationInbox.Pending(notification: notification(sub, type: "database"), coalesceKey: coalesceKey("database", sub), badges: sub.badges))
        }
        for (owner, items) in byOwner.sorted(by: { $0.key < $1.key }) {
            try deliver(to: owner, source: source, zone: zoneName) { device in
                owner == db.caller.user?.userRecordName && device == PathEncoding.component(db.caller.deviceID) ? [] : items
            }
        }
    }

    /// In the public database a query notification names a record only to a subscriber its
    /// type's GRANTs let read it; private and shared databases belong to their subscriber.
    private func subscriberMayRead(_ r: Record, owner: String) throws -> Bool {
        guard db.scope == .public else { return true }
        return SchemaRules.permits(.read, type: try db.schema().types[r.recordType], user: UserAccount(appleID: "", userRecordName: owner),
                                   roles: try db.schemaAdmin.roles(of: owner, db.address.environment), creator: r.created.userRecordName)
    }

    private func coalesceKey(_ type: String, _ sub: Subscription) -> String {
        type + "|" + db.scope.rawValue + "|" + PathEncoding.component(sub.subscriptionID)
    }

    /// A notification of `sub`, with what its notification info puts in it (PushPayload.swift);
    /// `record`: the record a query notification is about.
    private func notification(_ sub: Subscription, type: String, record: Record? = nil) -> [String: JSONValue] {
        var n = sub.notificationContent(record: record)
        let base: [String: JSONValue] = [
            "notificationType": .string(type), "subscriptionID": .string(sub.subscriptionID),
            "containerIdentifier": .string(db.address.container), "databaseScope": .string(db.scope.rawValue),
            "isPruned": false, "timestamp": .int(db.clock.now()),
        ]
        n.merge(base) { _, b in b }
        return n
    }

    /// Delivers to every registered device of `owner` (named as on disk, encoded) what
    /// `items(device)` gives it, about zone `zone`. Every
    /// inbox is tried; the first failure is then reported (the caller redoes the delivery, which
    /// the inboxes that have it skip).
    func deliver(to owner: String, source: (key: String, seq: Int64)?, zone: String, _ items: (String) -> [NotificationInbox.Pending]) throws {
        let root = db.paths.notifications(db.address.container, db.address.environment, user: owner)
        var failure: Error?
        for entry in try FileSystem.list(root) where !entry.hasPrefix(".") {
            let box = NotificationInbox(directory: root + "/" + entry)
            guard box.isRegistered else { continue }
            let device = PathEncoding.decodeSimple(entry) ?? entry
            do {
                try box.deliver(items(entry), source: source) { faultDropsDelivery(user: owner, device: device, zone: zone) }
            } catch { failure = failure ?? error }
        }
        if let f = failure { throw f }
    }

    /// Whether a `notifications/deliver` fault (`ck fault add --op notifications/deliver
    /// --drop-rate P`, Docs/faults.md) loses this delivery on the way, as a push can be lost.
    /// Asked once per new delivery to an inbox, under its lock. A fault store that cannot be
    /// read drops nothing: a delivery is never held up by it.
    private func faultDropsDelivery(user: String, device: String, zone: String) -> Bool {
        (try? FaultStore(paths: db.paths).dropsDelivery(user: user, device: device, zone: zone)) ?? false
    }
}

extension Database {
    package var notifications: Notifications { Notifications(db: self) }
}
