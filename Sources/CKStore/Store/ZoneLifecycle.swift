import CKCrypto
import CKModel

/// `zones/modify`: creating, deleting and purging custom zones. Each takes the environment's lock
/// (shared), the zone's lock, then the database's, writes its intent, changes the disk in one
/// atomic step (a `zone.json` appears; a zone directory leaves `zones/` in one rename), records
/// the change in the database history, notifies database subscriptions, and drops the intent.
package struct ZoneLifecycle {
    let db: Database

    package init(_ db: Database) { self.db = db }

    /// Creates a custom zone (only in the private database, as CloudKit). Creating a zone that
    /// exists returns it unchanged, like saving a CKRecordZone again.
    package func create(_ name: String) throws -> ZoneStore {
        try checkCreation(name)
        if name == ZoneID.defaultZoneName { return try db.zone(name) }
        // A zone that is there and has no change under way (a crashed deletion or purge
        // leaves an intent) is the answer; otherwise the intent is finished first, under the
        // locks, so a zone about to go is never returned as created.
        if case .present(let z) = try db.zonePresence(name), !(try FileSystem.exists(db.journal.intentFile(name))) { return z }
        let env = try db.environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try db.lockZone(name)
        defer { lock.unlock() }
        return try db.journal.withDatabaseLock(holdingZone: name) {
            switch try db.zonePresence(name) {
            case .present(let z): return z
            case .collision(let other):
                throw CloudKitError(.badRequest, "zone name '\(Names.describe(name))' collides with zone '\(Names.describe(other))' on this file system (names that differ only in case on a case-insensitive file system)", zoneID: db.zoneID(name))
            case .absent: break
            }
            if try db.listZones().count >= 1000 { throw CloudKitError(.limitExceeded, "a database holds at most 1000 zones", zoneID: db.zoneID(name)) }
            let path = db.zonePath(name)
            // The incarnation is chosen before anything is written, so the intent can name it.
            let inc = Hex.string((0..<8).map { _ in UInt8.random(in: 0...255) })
            let intent = try db.journal.newIntent(.create, zoneName: name, incarnation: inc)
            try db.journal.writeIntent(intent)
            let z: ZoneStore
            let entry: Int64
            do {
                guard let made = try ZoneStore.make(directory: path, zoneID: db.zoneID(name), incarnation: inc, timestamp: db.clock.now()) else {
                    throw CloudKitError.internalError("zone '\(Names.describe(name))' appeared while its lock was held")
                }
                z = made
                entry = try db.journal.appendDatabaseEntry(intent)
            } catch {
                try? FileSystem.removeTree(path)
                try? FileSystem.remove(db.journal.intentFile(name))
                throw error
            }
            // Done. Delivery follows; if it fails, the intent stays and is finished later.
            if (try? db.notifications.deliverZoneEvent(name, entry: entry)) != nil { try? FileSystem.remove(db.journal.intentFile(name)) }
            return z
        }
    }

    /// What a creation of a zone is refused for, before anything is done: a bad name, no
    /// account to write with, a database without custom zones.
    func checkCreation(_ name: String) throws {
        try Names.validateZoneName(name)
        try db.requireWrite()
        switch db.scope {
        case .public: throw CloudKitError(.badRequest, "custom zones cannot be created in the public database; it has only _defaultZone", zoneID: db.zoneID(name))
        case .shared: throw CloudKitError(.badRequest, "zones cannot be created in the shared database; it shows zones other users share with you", zoneID: db.zoneID(name))
        case .private: break
        }
    }

    /// Deletes a custom zone and every record in it.
    package func delete(_ name: String) throws {
        try removeZone(name, op: .delete)
    }

    /// CloudKit's purge of a custom zone of the private database: like a deletion, the zone,
    /// its records and its history are gone and every token of it expires; `changes/database`
    /// reports it as `{zoneID, deleted: true, purged: true}`, which tells a client to drop what
    /// it cached of the zone (and not upload it again).
    package func purge(_ name: String) throws {
        try Names.validateZoneName(name)
        try db.requireWrite()
        try checkPurge(name)
        try removeZone(name, op: .purge)
    }

    /// What a purge is refused for whether or not the zone exists: the default zone; a zone of
    /// the public database, which has none to purge; a zone of the shared database, which is
    /// its owner's to purge — ACCESS_DENIED for a participant who has it, as the rest of a
    /// zone's maintenance, else the zone is no zone of the caller's (BAD_REQUEST, as in public).
    package func checkPurge(_ name: String) throws {
        if name == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "the default zone cannot be purged", zoneID: db.zoneID(name))
        }
        guard db.scope != .private else { return }
        if db.scope == .shared, (try? db.shared?.bookmarkable(name)) == true {
            throw CloudKitError(.accessDenied, "zone '\(Names.describe(name))' belongs to the user who shared it; only its owner can purge it, from their private database", zoneID: db.zoneID(name))
        }
        throw CloudKitError(.badRequest, "only custom zones of the private database can be purged, not zones of the \(db.scope.rawValue) database", zoneID: db.zoneID(name))
    }

    /// A deletion or a purge: the same crash-safe path, told apart by the intent's operation
    /// (and so by the database history's entry).
    private func removeZone(_ name: String, op: DatabaseIntent.Op) throws {
        try Names.validateZoneName(name)
        try db.requireWrite()
        let verb = op == .purge ? "purged" : "deleted"
        if name == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "the default zone cannot be \(verb)", zoneID: db.zoneID(name))
        }
        if db.scope == .public {
            throw CloudKitError(.badRequest, "the public database has no custom zones to \(op == .purge ? "purge" : "delete")", zoneID: db.zoneID(name))
        }
        if db.scope == .shared {
            var e = CloudKitError(.badRequest, "a zone of the shared database belongs to the user who shared it; only they can delete it", zoneID: db.zoneID(name))
            e.nextStep = .leaveShare
            throw e
        }
        _ = try db.zone(name)
        let env = try db.environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try db.lockZone(name)
        defer { lock.unlock() }
        try db.journal.withDatabaseLock(holdingZone: name) {
            // It may have gone while this process waited for the locks.
            let z = try db.zone(name)
            // Its last commit's notifications go out before it goes.
            try db.finishInterruptedCommit(z)
            let intent = try db.journal.newIntent(op, zoneName: name, incarnation: z.incarnation)
            try db.journal.writeIntent(intent)
            do { try db.journal.moveToTrash(z, as: intent.trashName) } catch {
                try? FileSystem.remove(db.journal.intentFile(name))
                (try? Directory.open(db.directory))??.removeIfEmpty("trash")
                throw error
            }
            // The zone is gone. Finishing records it, notifies and empties the trash; if that
            // fails (a full disk), the intent stays and is finished later.
            try? db.journal.finish(intent)
        }
    }
}
