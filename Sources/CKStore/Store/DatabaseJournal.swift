import CKJSON
import CKModel

/// A database's own changes — zones made, changed, deleted and purged — as its history records
/// them: the intent written first, so that whoever takes the locks next finishes a change a
/// crash interrupted; the database history's entry; the zone moved to the trash.
struct DatabaseJournal {
    let db: Database
    private var directory: String { db.directory }
    private var databaseHistory: ChangeHistory { db.databaseHistory }
    var databaseLockFile: String { directory + "/lock" }
    var intentsDirectory: String { directory + "/intents" }
    var trashDirectory: String { directory + "/trash" }

    func intentFile(_ zone: String) -> String { intentsDirectory + "/" + intentFileName(zone) }
    private func intentFileName(_ zone: String) -> String { PathEncoding.component(zone) + ".json" }
    func zoneLockFile(_ zone: String) -> String { directory + "/locks/" + PathEncoding.component(zone) + ".lock" }

    /// Whether changes to this zone are entries of the database history: custom zones of the
    /// private and shared databases, which are the ones with change feeds.
    package func announces(_ zoneName: String) -> Bool { db.scope != .public && !zoneName.sameBytes(ZoneID.defaultZoneName) }

    /// Takes a zone's lock (by name: it outlives the zone, so a zone deleted and made again is
    /// guarded by the same lock), then finishes a database-level change a crash left for it.
    func lockZone(_ name: String) throws -> FileLock {
        let lock = try FileLock(path: zoneLockFile(name))
        let own = intentFileName(name)
        if try FileSystem.exists(intentsDirectory + "/" + own) {
            // This zone's own intent, by its path, whatever the listing `finishIntents` went by
            // says (kept, it may be older than the intent: one written where no write counter
            // sees — by hand, from a process with another /dev/shm): finished before its write.
            try withDatabaseLock(holdingZone: name) { try finishIntent(own, holdingZone: name) }
        }
        return lock
    }

    /// Runs `body` holding the database's lock, after finishing the intents crashed holders
    /// left. Lock order: environment, zone, database, inbox.
    func withDatabaseLock<T>(holdingZone: String?, _ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: databaseLockFile)
        defer { lock.unlock() }
        try finishIntents(holdingZone: holdingZone)
        return try body()
    }

    /// Finishes every intent whose zone this process holds or can lock now; an intent of a zone
    /// another process is writing is left to that process, which finishes it before its own.
    func finishIntents(holdingZone: String?) throws {
        // A server takes this lock for every group, and its `intents/` is almost always as it
        // last listed it (empty): the listing is kept while the write counters vouch for it (an
        // intent is written under this lock, and its counter moves before the lock is let go),
        // at most 250 ms, so one written where no counter sees is finished that much later.
        // A zone's own intent is read by its path before the zone is written (lockZone).
        for file in try StampedFiles.shared.listWhileVouched(intentsDirectory) where file.hasSuffix(".json") && !file.hasPrefix(".") {
            try finishIntent(file, holdingZone: holdingZone)
        }
    }

    /// Finishes the intent in `intents/<file>`, if it is there, when its zone is the one held or
    /// can be locked now.
    private func finishIntent(_ file: String, holdingZone: String?) throws {
        let path = intentsDirectory + "/" + file
        guard try FileSystem.exists(path) else { return }
        guard let j = try? FileSystem.readJSON(path), let intent = DatabaseIntent(json: j) else {
            // A torn intent was never acted on: nothing was changed after it.
            try FileSystem.remove(path)
            return
        }
        if let h = holdingZone, intent.zoneName.sameBytes(h) {
            try finish(intent)
        } else if let l = try FileLock.attempt(zoneLockFile(intent.zoneName)) {
            defer { l.unlock() }
            try finish(intent)
        }
    }

    /// An intent for a change about to be made. The caller holds the database lock.
    func newIntent(_ op: DatabaseIntent.Op, zoneName: String, incarnation: String, zoneSeq: Int64? = nil) throws -> DatabaseIntent {
        DatabaseIntent(op: op, zoneName: zoneName, incarnation: incarnation, zoneSeq: zoneSeq, after: try databaseHistory.recoverHead())
    }

    /// A zone's creation, deletion or purge (a write has none): synced (the file, then
    /// `intents/`) before the change it stands for is made — a power loss that kept a zone's
    /// `zone.json` or its move into the trash, and lost the intent, would leave the database
    /// history without the change. Zones are made and deleted rarely; the two syncs cost
    /// nothing that matters.
    func writeIntent(_ i: DatabaseIntent) throws {
        try FileSystem.writeJSON(intentFile(i.zoneName), i.json)
    }

    /// Completes one intent (idempotently) and removes it. The caller holds the database lock
    /// and the zone's lock.
    package func finish(_ intent: DatabaseIntent) throws {
        var zone: ZoneStore?
        if case .present(let z) = try db.zonePresence(intent.zoneName), z.incarnation == intent.incarnation { zone = z }
        switch intent.op {
        case .create:
            if zone != nil {
                try db.notifications.deliverZoneEvent(intent.zoneName, entry: try recordInDatabaseHistory(intent))
            } else if case .absent = try db.zonePresence(intent.zoneName) {
                // Made part-way: a directory without its zone.json is no zone.
                try FileSystem.removeTree(DataPaths.zone(database: directory, zoneName: intent.zoneName))
            }
        case .change:
            // The zone's head as the log has it: a commit synced before the crash counts.
            if let z = zone, try z.history.recoverHead() >= intent.zoneSeq! { _ = try recordInDatabaseHistory(intent) }
        case .delete, .purge:
            if let z = zone {
                // Its last commit's notifications go out before it goes.
                try db.finishInterruptedCommit(z)
                try moveToTrash(z, as: intent.trashName)
            }
            try db.notifications.deliverZoneEvent(intent.zoneName, entry: try recordInDatabaseHistory(intent))
            try FileSystem.removeTree(trashDirectory + "/" + intent.trashName)
        }
        try FileSystem.remove(intentFile(intent.zoneName))
    }

    /// The database history entry recording the intent: found among the entries written since
    /// the intent was (so it is recorded once, whoever finishes it), or appended. Returns its seq.
    func recordInDatabaseHistory(_ intent: DatabaseIntent) throws -> Int64 {
        // An entry a crash left synced but unindexed is among those looked at (else it would be
        // indexed by the append below, and the intent recorded twice).
        try databaseHistory.recoverHead()
        var found: Int64?
        try databaseHistory.forEachDatabaseEntry(after: intent.after) { e in
            if intent.isRecorded(by: e) { found = e.seq; return false }
            return true
        }
        if let f = found { return f }
        return try appendDatabaseEntry(intent)
    }

    /// Appends the intent's entry, numbered from the head the append finds (the caller holds
    /// the database's lock). A write's entry has no intent written (`Database.commitDurably`).
    /// `beforeIndexing`: runs once the entry is synced, before readers can see it (the zone's
    /// commit the entry announces: `Database.commitDurably`); if it throws, the entry is taken
    /// back. Once it has returned, the entry stays (`keepsOnceReady`).
    @discardableResult
    func appendDatabaseEntry(_ i: DatabaseIntent, beforeIndexing: (() throws -> Void)? = nil) throws -> Int64 {
        let now = db.clock.now()
        return try databaseHistory.append(numbered: { seq in
            DatabaseHistoryEntry(seq: seq, timestamp: now, op: i.op, zoneName: i.zoneName, incarnation: i.incarnation, zoneSeq: i.zoneSeq).json
        }, beforeIndexing: beforeIndexing, keepsOnceReady: beforeIndexing != nil)
    }

    /// A zone leaves `zones/` in one rename: from then on it does not exist. `name`: the
    /// intent's `trashName`.
    func moveToTrash(_ z: ZoneStore, as name: String) throws {
        guard let zones = try Directory.open(directory + "/zones"), let trash = try Directory.open(trashDirectory, create: true) else { return }
        try trash.removeTree(name)
        try zones.move(PathEncoding.component(z.zoneID.zoneName), to: trash, as: name)
        zones.sync()
    }
}

extension Database {
    var databaseHistory: ChangeHistory { ChangeHistory(directory: directory, lockFile: directory + "/lock", announcesZones: true) }
    /// The database's own changes and their locks (DatabaseJournal).
    var journal: DatabaseJournal { DatabaseJournal(db: self) }

    /// Takes a zone's lock, finishing a database-level change a crash left for it.
    func lockZone(_ name: String) throws -> FileLock { try journal.lockZone(name) }
}
