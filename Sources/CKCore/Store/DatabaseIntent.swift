/// What a zone-level change means to its database: a zone created, written or deleted is an
/// entry of the database's history (`changes/database` reads it). Each such change is first
/// written down as an intent, `intents/<zone>.json` beside the database's history, and the
/// intent is removed once the change and its history entry are both done. A crash in between
/// leaves the intent; whoever next locks that zone (its next writer, creator or deleter), any
/// writer of the database that can lock it, or `ck fsck` finishes it — so the database history
/// never misses a change that happened, and never holds one that did not.
struct DatabaseIntent: Equatable {
    enum Op: String { case create, change, delete }
    var op: Op
    var zoneName: String
    var incarnation: String
    /// For a change: the zone history's last entry written by the commit.
    var zoneSeq: Int64?

    var json: JSONValue {
        var o: [String: JSONValue] = ["schemaVersion": .int(DataPaths.schemaVersion), "op": .string(op.rawValue),
                                      "zoneName": .string(zoneName), "incarnation": .string(incarnation)]
        if let s = zoneSeq { o["zoneSeq"] = .int(s) }
        return .object(o)
    }

    init(op: Op, zoneName: String, incarnation: String, zoneSeq: Int64? = nil) {
        self.op = op
        self.zoneName = zoneName
        self.incarnation = incarnation
        self.zoneSeq = zoneSeq
    }

    init?(json j: JSONValue) {
        guard let o = j["op"]?.stringValue.flatMap(Op.init(rawValue:)), let z = j["zoneName"]?.stringValue,
              let i = j["incarnation"]?.stringValue else { return nil }
        self.init(op: o, zoneName: z, incarnation: i, zoneSeq: j["zoneSeq"]?.int64Value)
        if o == .change && zoneSeq == nil { return nil }
    }

    /// Whether a database history entry records this intent.
    func isRecorded(by e: JSONValue) -> Bool {
        e["op"]?.stringValue == op.rawValue && (e["zoneName"]?.stringValue).map { $0.sameBytes(zoneName) } == true
            && e["incarnation"]?.stringValue == incarnation && e["zoneSeq"]?.int64Value == zoneSeq
    }
}

extension Database {
    var databaseHistory: ChangeHistory { ChangeHistory(directory: directory) }
    var databaseLockFile: String { directory + "/lock" }
    var intentsDirectory: String { directory + "/intents" }
    var trashDirectory: String { directory + "/trash" }

    func intentFile(_ zone: String) -> String { intentsDirectory + "/" + PathEncoding.component(zone) + ".json" }
    func zoneLockFile(_ zone: String) -> String { directory + "/locks/" + PathEncoding.component(zone) + ".lock" }

    /// Whether changes to this zone are entries of the database history: custom zones of the
    /// private and shared databases, which are the ones with change feeds.
    func announces(_ zoneName: String) -> Bool { scope != .public && zoneName != ZoneID.defaultZoneName }

    /// Takes a zone's lock (by name: it outlives the zone, so a zone deleted and made again is
    /// guarded by the same lock), then finishes a database-level change a crash left for it.
    func lockZone(_ name: String) throws -> FileLock {
        let lock = try FileLock(path: zoneLockFile(name))
        if try FileSystem.exists(intentFile(name)) {
            try withDatabaseLock(holdingZone: name) {}
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
        for file in try FileSystem.list(intentsDirectory) where file.hasSuffix(".json") && !file.hasPrefix(".") {
            guard let j = try? FileSystem.readJSON(intentsDirectory + "/" + file), let intent = DatabaseIntent(json: j) else {
                // A torn intent was never acted on: nothing was changed after it.
                try FileSystem.remove(intentsDirectory + "/" + file)
                continue
            }
            if let h = holdingZone, intent.zoneName.sameBytes(h) {
                try finish(intent)
            } else if let l = try FileLock.attempt(zoneLockFile(intent.zoneName)) {
                defer { l.unlock() }
                try finish(intent)
            }
        }
    }

    func writeIntent(_ i: DatabaseIntent) throws {
        try FileSystem.writeJSON(intentFile(i.zoneName), i.json, durable: false)
    }

    /// Completes one intent (idempotently) and removes it. The caller holds the database lock
    /// and the zone's lock.
    func finish(_ intent: DatabaseIntent) throws {
        var zone: ZoneStore?
        if case .present(let z) = try zonePresence(intent.zoneName), z.incarnation == intent.incarnation { zone = z }
        switch intent.op {
        case .create:
            if zone != nil {
                try record(intent)
                try deliverZoneEvent(intent.zoneName)
            } else if case .absent = try zonePresence(intent.zoneName) {
                // Made part-way: a directory without its zone.json is no zone.
                try FileSystem.removeTree(DataPaths.zone(database: directory, zoneName: intent.zoneName))
            }
        case .change:
            if let z = zone, try z.history.head() >= intent.zoneSeq! { try record(intent) }
        case .delete:
            if let z = zone { try moveToTrash(z) }
            try record(intent)
            try deliverZoneEvent(intent.zoneName)
            try FileSystem.removeTree(trashDirectory + "/" + intent.incarnation)
        }
        try FileSystem.remove(intentFile(intent.zoneName))
    }

    /// Appends the intent's database history entry unless it is already the last one.
    private func record(_ intent: DatabaseIntent) throws {
        let h = databaseHistory
        let head = try h.head()
        if head > 0, let last = try h.entry(head), intent.isRecorded(by: last) { return }
        try appendDatabaseEntry(intent)
    }

    func appendDatabaseEntry(_ i: DatabaseIntent) throws {
        let h = databaseHistory
        var e: [String: JSONValue] = ["seq": .int(try h.head() + 1), "timestamp": .int(clock.now()), "op": .string(i.op.rawValue),
                                      "zoneName": .string(i.zoneName), "incarnation": .string(i.incarnation)]
        if let s = i.zoneSeq { e["zoneSeq"] = .int(s) }
        try h.append([.object(e)])
    }

    /// A zone leaves `zones/` in one rename: from then on it does not exist.
    func moveToTrash(_ z: ZoneStore) throws {
        guard let zones = try Directory.open(directory + "/zones"), let trash = try Directory.open(trashDirectory, create: true) else { return }
        try trash.removeTree(z.incarnation)
        try zones.move(PathEncoding.component(z.zoneID.zoneName), to: trash, as: z.incarnation)
        zones.sync()
    }
}
