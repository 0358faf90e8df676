import CKJSON
import CKModel

/// Remote-tracking state, as git's `refs/remotes`: per remote, database and zone, what ck last
/// saw of the remote zone (`fetched`: each record as the remote answered it, its change tag
/// included, and the sync token or query cursor to go on from) and, per record, the remote
/// version the local store last agreed with (`base`): the base of a three-way merge and the
/// precondition of every push. It holds no secret.
///
/// It lives beside the database's zones, `<database>/remotes/<remote>/<zone>.log`: a
/// whole-lines AppendLog, one entry per change to it, so that every page fetched is saved with
/// its cursor in one append — after a crash the state is that of the last whole entry, and a
/// pull goes on from its cursor without fetching a page twice. An entry holds any of:
/// `reset` (forget what was seen: an expired token, a zone deleted remotely), `fetched` /
/// `fetchedDeleted` (records, names), `base` / `baseDeleted`, `syncToken`, `cursor` (a query
/// position per record type), `complete` (the fetch from the last reset reached the end).
package struct RemoteTrackingLog {
    /// `<database>/remotes/<remote>`: its lock, `database.log` (the database's change token)
    /// and `zones/<zone>.log`.
    package let remoteDirectory: String
    private let log: AppendLog

    /// A zone's log; `zoneName` nil: the database's own (its `changes/database` token).
    package init(database: String, remote: String, zoneName: String?) {
        remoteDirectory = database + "/remotes/" + PathEncoding.component(remote)
        if let z = zoneName {
            log = AppendLog(directory: remoteDirectory + "/zones", name: PathEncoding.component(z) + ".log", commit: .wholeLines, noun: "remote-tracking log")
        } else {
            log = AppendLog(directory: remoteDirectory, name: "database.log", commit: .wholeLines, noun: "remote-tracking log")
        }
    }

    /// Appends one entry under the remote's lock, synced before it returns.
    package func append(_ entry: [String: JSONValue]) throws {
        var e = entry
        e["schemaVersion"] = .int(FileFormat.schemaVersion)
        let bytes = Array(JSONWriter.compact(.object(e)).utf8)
        _ = try Directory.open(log.directory, create: true)
        let lock = try FileLock(path: remoteDirectory + "/lock")
        defer { lock.unlock() }
        try log.append([bytes])
    }

    package var exists: Bool { (try? FileSystem.exists(log.path)) ?? false }

    /// The state the entries add up to.
    package func read() throws -> TrackedZone {
        var z = TrackedZone()
        var line = 0
        try log.forEachEntry { bytes, _ in
            line += 1
            guard let e = try? JSONParser.parse(Array(bytes)), e.objectValue != nil else {
                throw CloudKitError.internalError("\(log.path): line \(line) is not a tracking entry (run 'ck fsck')")
            }
            z.apply(e)
            return true
        }
        return z
    }
}

/// What a zone's tracking entries add up to.
package struct TrackedZone {
    /// Each record as the remote last answered it, by name.
    package var fetched: [NameKey: JSONValue] = [:]
    /// Each record's remote version the local store last agreed with (absent: none, the record
    /// was not there when they last agreed).
    package var base: [NameKey: JSONValue] = [:]
    package var syncToken: String?
    /// A query's position, per record type (the public database and default zones).
    package var cursor: [String: JSONValue] = [:]
    /// The fetch since the last reset reached the end of the feed (or of every query).
    package var complete = false
    package var entries = 0
    /// Query scans begun (`scan`), and the scan each fetched record was last seen in: a record
    /// a whole scan did not see is gone from the remote (a query reports no deletions).
    package var scan = 0
    package var seen: [NameKey: Int] = [:]

    package init() {}

    mutating func apply(_ e: JSONValue) {
        entries += 1
        if e["reset"]?.boolValue == true {
            fetched = [:]
            syncToken = nil
            cursor = [:]
            complete = false
            if e["keepBase"]?.boolValue != true { base = [:] }
        }
        if e["scan"]?.boolValue == true { scan += 1 }
        for r in e["fetched"]?.arrayValue ?? [] {
            if let n = r["recordName"]?.stringValue { fetched[NameKey(n)] = r; seen[NameKey(n)] = scan }
        }
        for n in e["fetchedDeleted"]?.arrayValue ?? [] { if let n = n.stringValue { fetched[NameKey(n)] = nil; seen[NameKey(n)] = nil } }
        for r in e["base"]?.arrayValue ?? [] { if let n = r["recordName"]?.stringValue { base[NameKey(n)] = r } }
        for n in e["baseDeleted"]?.arrayValue ?? [] { if let n = n.stringValue { base[NameKey(n)] = nil } }
        if let t = e["syncToken"] { syncToken = t.stringValue }
        if let c = e["cursor"]?.objectValue { for (k, v) in c { cursor[k] = v } }
        if let c = e["complete"]?.boolValue { complete = c }
    }
}

/// Every remote's tracking state in the data directory, for removing or renaming a remote.
struct RemoteTrackingTree {
    let paths: DataPaths

    /// `<database>/remotes` of every database that has one.
    private func remoteDirectories() throws -> [String] {
        var out: [String] = []
        let containers = paths.root + "/containers"
        for c in try FileSystem.list(containers) {
            for env in ["development", "production"] {
                let e = containers + "/" + c + "/" + env
                var dbs = [e + "/public"]
                for scope in ["private", "shared"] { dbs += try FileSystem.list(e + "/" + scope).map { e + "/" + scope + "/" + $0 } }
                for db in dbs where try FileSystem.exists(db + "/remotes") { out.append(db + "/remotes") }
            }
        }
        return out
    }

    func removeAll(remote: String) throws {
        let name = PathEncoding.component(remote)
        for d in try remoteDirectories() where try FileSystem.exists(d + "/" + name) { try FileSystem.removeTree(d + "/" + name) }
    }

    func renameAll(remote old: String, to new: String) throws {
        let (o, n) = (PathEncoding.component(old), PathEncoding.component(new))
        for d in try remoteDirectories() where try FileSystem.exists(d + "/" + o) {
            guard let dir = try Directory.open(d) else { continue }
            try dir.rename(o, to: n)
        }
    }
}
