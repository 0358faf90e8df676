import CKJSON
import CKModel

/// `subscriptions/modify|list|lookup`: a user's subscriptions in one database, with CloudKit's
/// rules on which kinds each database allows. Reached as `db.subscriptions`.
package struct Subscriptions {
    let db: Database

    var store: SubscriptionStore { SubscriptionStore(databaseDirectory: db.directory, scope: db.scope) }

    /// Checks a subscription against the database and saves it; an existing ID is replaced.
    @discardableResult
    package func save(_ s: Subscription) throws -> Subscription {
        let user = try check(s)
        let env = try db.environmentGuard.lockForWriting()
        defer { env.unlock() }
        // The device is registered with the subscription, or neither happens.
        let box = try db.notifications.inbox()
        let registered = box.isRegistered
        do {
            try box.register()
            try store.save(s, owner: user.userRecordName, created: db.clock.now())
        } catch {
            if !registered { try? box.unregisterIfUntouched() }
            throw error
        }
        return s
    }

    /// What saving a subscription is refused for, before anything is written: its ID, the
    /// account, CloudKit's rules on which kinds each database allows, its zone and filters.
    /// Returns the user who would own it.
    @discardableResult
    func check(_ s: Subscription) throws -> UserAccount {
        try Subscription.validateID(s.subscriptionID)
        let user = try db.requireWrite()
        switch (s.kind, db.scope) {
        case (.query, .shared):
            throw CloudKitError(.badRequest, "query subscriptions are not supported in the shared database; use a database subscription", subscriptionID: s.subscriptionID)
        case (.zone, .public):
            throw CloudKitError(.badRequest, "zone subscriptions exist only in the private and shared databases", subscriptionID: s.subscriptionID)
        case (.database, .public):
            throw CloudKitError(.badRequest, "the public database does not support database subscriptions; use a query subscription", subscriptionID: s.subscriptionID)
        default: break
        }
        if let t = s.recordType { try Names.validateRecordType(t) }
        if s.kind == .query {
            guard s.recordType != nil else { throw CloudKitError(.badRequest, "a query subscription needs a record type", subscriptionID: s.subscriptionID) }
            if s.firesOn.isEmpty { throw CloudKitError(.badRequest, "a query subscription must fire on at least one of create, update, delete", subscriptionID: s.subscriptionID) }
            for f in s.filters { try f.validate() }
        } else if !s.filters.isEmpty || s.firesOnce {
            throw CloudKitError(.badRequest, "filters and firesOnce apply only to query subscriptions", subscriptionID: s.subscriptionID)
        }
        if s.kind == .database, s.zoneName != nil {
            throw CloudKitError(.badRequest, "a database subscription watches every custom zone; it takes no zone", subscriptionID: s.subscriptionID)
        }
        if let z = s.zoneName {
            try Names.validateZoneName(z)
            if s.kind == .zone && z == ZoneID.defaultZoneName {
                throw CloudKitError(.badRequest, "zone subscriptions are supported only in custom zones, not the default zone", zoneID: db.zoneID(z), subscriptionID: s.subscriptionID)
            }
            _ = try db.zone(z)
        } else if s.kind == .zone {
            throw CloudKitError(.badRequest, "a zone subscription needs a zone", subscriptionID: s.subscriptionID)
        }
        return user
    }

    package func list() throws -> [Subscription] {
        let user = try db.caller.requireUser(for: "reading subscriptions")
        return try store.list(owner: user.userRecordName)
    }

    package func get(_ id: String) throws -> Subscription {
        try Subscription.validateID(id)
        let user = try db.caller.requireUser(for: "reading subscriptions")
        guard let s = try store.get(owner: user.userRecordName, id: id) else {
            throw CloudKitError(.notFound, "subscription '\(id)' not found in the \(db.scope.rawValue) database", subscriptionID: id)
        }
        return s
    }

    package func delete(_ id: String) throws {
        try Subscription.validateID(id)
        let user = try db.requireWrite()
        let env = try db.environmentGuard.lockForWriting()
        defer { env.unlock() }
        guard try store.delete(owner: user.userRecordName, id: id) else {
            throw CloudKitError(.notFound, "subscription '\(id)' not found in the \(db.scope.rawValue) database", subscriptionID: id)
        }
    }

    package func json(_ s: Subscription) -> JSONValue { s.json(ownerRecordName: db.ownerRecordName) }
}

extension Database {
    package var subscriptions: Subscriptions { Subscriptions(db: self) }
}
