/// Turns committed changes into notifications for every subscription they match, delivered to
/// each device of the subscribing user (except the device that made the change, as CloudKit
/// leaves out the originating device).
extension Database {
    /// After a batch of record changes in one zone.
    func deliverNotifications(zone z: ZoneStore, changes: [RecordChange]) throws {
        guard !changes.isEmpty else { return }
        let zoneName = z.zoneID.zoneName
        for (owner, sub) in try subscriptionStore.all(owner: ownerRecordName) {
            var items: [NotificationInbox.Pending] = []
            switch sub.kind {
            case .database:
                if z.zoneID.isDefault { continue }
                items.append(NotificationInbox.Pending(notification: notification(sub, type: "database"), coalesceKey: "database|\(scope.rawValue)|\(sub.subscriptionID)"))
            case .zone:
                guard changes.contains(where: { sub.fires(on: $0, zone: zoneName) != nil }) else { continue }
                var n = notification(sub, type: "recordZone")
                n["zoneID"] = z.zoneID.json
                items.append(NotificationInbox.Pending(notification: n, coalesceKey: "recordZone|\(scope.rawValue)|\(sub.subscriptionID)"))
            case .query:
                for c in changes {
                    guard let event = sub.fires(on: c, zone: zoneName) else { continue }
                    var n = notification(sub, type: "query")
                    n["zoneID"] = z.zoneID.json
                    n["recordName"] = .string(c.recordName)
                    n["queryNotificationReason"] = .string(["create": "recordCreated", "update": "recordUpdated", "delete": "recordDeleted"][event.rawValue]!)
                    items.append(NotificationInbox.Pending(notification: n, coalesceKey: nil))
                    if sub.firesOnce { break }
                }
            }
            guard !items.isEmpty else { continue }
            try deliver(items, to: owner)
            if sub.firesOnce { _ = try subscriptionStore.delete(owner: owner, id: sub.subscriptionID) }
        }
    }

    /// After a custom zone is created or deleted: database subscriptions fire.
    func deliverZoneEvent(_ zoneName: String) throws {
        guard scope != .public, zoneName != ZoneID.defaultZoneName else { return }
        for (owner, sub) in try subscriptionStore.all(owner: ownerRecordName) where sub.kind == .database {
            try deliver([NotificationInbox.Pending(notification: notification(sub, type: "database"), coalesceKey: "database|\(scope.rawValue)|\(sub.subscriptionID)")], to: owner)
        }
    }

    private func notification(_ sub: Subscription, type: String) -> [String: JSONValue] {
        var n: [String: JSONValue] = [
            "notificationType": .string(type), "subscriptionID": .string(sub.subscriptionID),
            "containerIdentifier": .string(address.container), "databaseScope": .string(scope.rawValue),
            "isPruned": false, "timestamp": .int(clock.now()),
        ]
        if let a = sub.alertBody { n["alertBody"] = .string(a) }
        if sub.shouldSendContentAvailable { n["contentAvailable"] = true }
        return n
    }

    private func deliver(_ items: [NotificationInbox.Pending], to owner: String) throws {
        let root = paths.notifications(address.container, address.environment, user: owner)
        for device in try FileSystem.list(root) where !device.hasPrefix(".") {
            let box = NotificationInbox(directory: root + "/" + device)
            if owner == caller.user?.userRecordName && device == PathEncoding.component(caller.deviceID) { continue }
            try box.deliver(items)
        }
    }
}
