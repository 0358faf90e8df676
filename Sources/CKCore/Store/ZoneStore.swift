import Foundation

/// One zone on disk: `zone.json`, `records/<shard>/<name>.json`, `refs/<shard>/<name>.json`
/// (who references a record with DELETE_SELF or VALIDATE), the change history, and `lock`.
public final class ZoneStore {
    public let directory: String
    public let zoneID: ZoneID
    public let history: ChangeHistory

    public init(directory: String, zoneID: ZoneID) {
        self.directory = directory
        self.zoneID = zoneID
        self.history = ChangeHistory(zoneDirectory: directory)
    }

    public var zoneFile: String { directory + "/zone.json" }
    public var lockFile: String { directory + "/lock" }
    public var recordsDirectory: String { directory + "/records" }
    var refsDirectory: String { directory + "/refs" }

    public var existsOnDisk: Bool { FileSystem.exists(zoneFile) }

    /// Distinguishes a zone from an earlier zone of the same name that was deleted.
    public func incarnation() throws -> String {
        try FileSystem.readJSON(zoneFile)?["incarnation"]?.stringValue ?? "0"
    }

    public func recordPath(_ name: String) -> String {
        recordsDirectory + "/" + PathEncoding.shard(name) + "/" + PathEncoding.component(name) + ".json"
    }

    func refsPath(_ target: String) -> String {
        refsDirectory + "/" + PathEncoding.shard(target) + "/" + PathEncoding.component(target) + ".json"
    }

    /// Reads one record: one file, whatever the zone's size.
    public func record(named name: String) throws -> Record? {
        guard let j = try FileSystem.readJSON(recordPath(name)) else { return nil }
        guard let r = j["record"] else { throw CloudKitError.internalError("corrupt record file \(recordPath(name))") }
        let rec = try Record(stored: r)
        // A long name is stored under a hashed file name; make sure it is this one.
        return rec.recordName == name ? rec : nil
    }

    /// Records referencing `target` with DELETE_SELF or VALIDATE: source name → actions.
    func referrers(of target: String) throws -> [String: [String]] {
        guard let j = try FileSystem.readJSON(refsPath(target)), let o = j["referrers"]?.objectValue else { return [:] }
        return o.mapValues { ($0.arrayValue ?? []).compactMap(\.stringValue) }
    }

    /// Creates the zone's directory and zone.json if missing.
    func create(timestamp: Int64) throws {
        if existsOnDisk { return }
        try FileSystem.makeDirectories(directory)
        try FileSystem.writeJSON(zoneFile, [
            "schemaVersion": .int(DataPaths.schemaVersion), "zoneID": zoneID.json, "created": .int(timestamp),
            "incarnation": .string(Identifiers.hex((0..<8).map { _ in UInt8.random(in: 0...255) })),
        ])
    }

    /// Runs `body` holding the zone's lock.
    public func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        return try body()
    }

    /// Streams every record, shard by shard, in a stable order (same state, same order).
    public func forEachRecord(_ body: (Record) throws -> Bool) throws {
        for shard in try FileSystem.list(recordsDirectory) {
            let dir = recordsDirectory + "/" + shard
            for file in try FileSystem.list(dir) where file.hasSuffix(".json") && !file.hasPrefix(".") {
                guard let j = try FileSystem.readJSON(dir + "/" + file), let r = j["record"] else { continue }
                if try !body(try Record(stored: r)) { return }
            }
        }
    }

    /// Writes what a transaction changed: history first — it is the write-ahead log, synced
    /// before anything else is written, and holds every saved record whole — then the asset
    /// bytes, record files and reference index, each replaced atomically, and one file-system
    /// sync for them all. A crash in between leaves files that `ck fsck` restores from the log.
    func commit(_ tx: Transaction, assets: AssetStore) throws {
        guard !tx.entries.isEmpty else { return }
        try history.append(tx.entries)
        defer { FileSystem.syncFileSystem(directory) }
        for (sum, bytes) in tx.assets where !assets.contains(checksum: sum) { _ = try assets.put(bytes) }
        for (name, rec) in tx.records {
            let p = recordPath(name)
            if let r = rec {
                try FileSystem.makeDirectories((p as NSString).deletingLastPathComponent)
                try FileSystem.writeJSON(p, ["schemaVersion": .int(DataPaths.schemaVersion), "record": r.json()], durable: false)
            } else {
                try FileSystem.remove(p)
            }
        }
        for (target, refs) in tx.refs {
            let p = refsPath(target)
            if refs.isEmpty { try FileSystem.remove(p); continue }
            try FileSystem.makeDirectories((p as NSString).deletingLastPathComponent)
            let o = refs.mapValues { JSONValue.array($0.map(JSONValue.string)) }
            try FileSystem.writeJSON(p, ["schemaVersion": .int(DataPaths.schemaVersion), "target": .string(target), "referrers": .object(o)], durable: false)
        }
    }
}
