import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Remote-tracking state, as git's `refs/remotes`: per remote, database and zone, what ck last
/// saw of the remote zone (`fetched`: each record as the remote answered it, its change tag
/// included, and the sync token or query cursor to go on from) and, per record, the remote
/// version the local store last agreed with (`base`): the base of a three-way merge and the
/// precondition of every push. It holds no secret.
///
/// It lives beside the database's zones, `<database>/remotes/<remote>/zones/<zone>.log`, and
/// the database's own token in `…/<remote>/database.log`: whole-lines AppendLogs. One change
/// (a page fetched with its cursor, a merge's or a push's new base) is one append of lines
/// that begins with a `begin` line and ends with a `commit` line, so it counts whole or not at
/// all: lines a crash left of an append that never wrote its commit are no state, and the next
/// append's `begin` drops them. Lines:
/// - `{"begin":true,"reset":B,"keepBase":B,"scan":B}`: reset forgets what was fetched (and the
///   base unless keepBase); scan: a query scan of every type begins;
/// - `{"f":RECORD}` fetched, `{"fd":NAME}` fetched deleted, `{"b":RECORD}` base,
///   `{"bd":NAME}` base gone — one record a line, so the state of a zone of any size is an
///   index of names and offsets, and a record is read back when it is wanted;
/// - `{"commit":true,"syncToken":…,"cursor":{TYPE: MARKER|null},"complete":B}`.
package struct RemoteTrackingLog {
    /// `<database>/remotes/<remote>`: its lock, `database.log` and `zones/<zone>.log`.
    package let remoteDirectory: String
    private let log: AppendLog
    /// Where the zone's name is kept when its file name cannot spell it out (a hashed one).
    private let zoneNameFile: (path: String, zoneName: String)?

    /// A zone's log; `zoneName` nil: the database's own (its `changes/database` token).
    package init(database: String, remote: String, zoneName: String?) {
        remoteDirectory = database + "/remotes/" + PathEncoding.component(remote)
        if let z = zoneName {
            let file = PathEncoding.component(z)
            log = AppendLog(directory: remoteDirectory + "/zones", name: file + ".log", commit: .wholeLines, noun: "remote-tracking log")
            zoneNameFile = PathEncoding.decodeSimple(file) == z ? nil : (remoteDirectory + "/zones/" + file + ".zone", z)
        } else {
            log = AppendLog(directory: remoteDirectory, name: "database.log", commit: .wholeLines, noun: "remote-tracking log")
            zoneNameFile = nil
        }
    }

    /// One change to the state.
    package struct Change {
        package var reset = false
        package var keepBase = false
        package var scan = false
        package var fetched: [JSONValue] = []
        package var fetchedDeleted: [String] = []
        package var base: [JSONValue] = []
        package var baseDeleted: [String] = []
        package var syncToken: String?
        package var cursor: [String: JSONValue] = [:]
        package var complete: Bool?
        package init() {}
    }

    /// Appends one change under the remote's lock, synced before it returns.
    package func append(_ c: Change) throws {
        var lines: [[UInt8]] = []
        func line(_ o: [String: JSONValue]) { lines.append(Array(JSONWriter.compact(.object(o)).utf8)) }
        var begin: [String: JSONValue] = ["begin": true]
        if c.reset { begin["reset"] = true; begin["keepBase"] = .bool(c.keepBase) }
        if c.scan { begin["scan"] = true }
        line(begin)
        for r in c.fetched { line(["f": r]) }
        for n in c.fetchedDeleted { line(["fd": .string(n)]) }
        for r in c.base { line(["b": r]) }
        for n in c.baseDeleted { line(["bd": .string(n)]) }
        var commit: [String: JSONValue] = ["commit": true, "schemaVersion": .int(FileFormat.schemaVersion)]
        if let t = c.syncToken { commit["syncToken"] = .string(t) }
        if !c.cursor.isEmpty { commit["cursor"] = .object(c.cursor) }
        if let x = c.complete { commit["complete"] = .bool(x) }
        line(commit)
        _ = try Directory.open(log.directory, create: true)
        let lock = try FileLock(path: remoteDirectory + "/lock")
        defer { lock.unlock() }
        // Before the log: a log is never there without the name of its zone.
        if let f = zoneNameFile, try !FileSystem.exists(f.path) { try FileSystem.writeJSON(f.path, .object(["zoneName": .string(f.zoneName)])) }
        try log.append(lines)
    }

    /// The zone names (tracking keys) of the logs in `<database>/remotes/<remote>/zones`: from
    /// each file name, or, where the name was too long to spell out, from the `.zone` file
    /// beside the log.
    package static func zoneNames(database: String, remote: String) throws -> [String] {
        let dir = database + "/remotes/" + PathEncoding.component(remote) + "/zones"
        return try FileSystem.list(dir).filter { $0.hasSuffix(".log") }.compactMap { f in
            let file = String(f.dropLast(4))
            if let name = PathEncoding.decodeSimple(file) { return name }
            return try FileSystem.readJSON(dir + "/" + file + ".zone")?["zoneName"]?.stringValue
        }
    }

    package var exists: Bool { (try? FileSystem.exists(log.path)) ?? false }

    // MARK: the summary kept beside the log

    /// Where the summary of a zone's state is kept: `zones/<zone>.log.summary`, a cache of what
    /// the whole log adds up to (counts, token, cursor), stamped with the log's inode, size and
    /// modification time. A pull of a remote where nothing changed reads it instead of every
    /// tracked zone's log; any append (or repair) changes the stamp, and the log is read again.
    private var summaryPath: String { log.path + ".summary" }

    private func stamp() -> JSONValue? {
        var st = stat()
        guard lstat(log.path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        #if canImport(Darwin)
        let mtime = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
        #else
        let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        #endif
        return .object(["inode": .int(Int64(st.st_ino)), "size": .int(Int64(st.st_size)), "mtime": .int(mtime)])
    }

    /// The summary, if the log is as it was when it was made; nil otherwise.
    package func summary() -> JSONValue? {
        guard let now = stamp(), let kept = try? FileSystem.readJSON(summaryPath), kept["log"] == now,
              kept["schemaVersion"]?.int64Value == Int64(FileFormat.schemaVersion) else { return nil }
        return kept["state"]
    }

    /// Keeps `state` as the summary of the log as it is now. A cache: not synced, and a
    /// failure to write it changes nothing.
    package func saveSummary(_ state: JSONValue) {
        guard let now = stamp() else { return }
        try? FileSystem.writeJSON(summaryPath, .object(["schemaVersion": .int(FileFormat.schemaVersion), "log": now, "state": state]), durable: false)
    }

    /// The state the committed changes add up to: names, tags and where each record's line is.
    package func read() throws -> TrackedZone {
        var z = TrackedZone(log: log)
        var pending: [(JSONValue, Int64, Int)] = []
        var at: Int64 = 0
        var line = 0
        // A line that is no entry is damage only if a commit line follows it; after the last
        // commit it is what a crash left of an append, and no state.
        var damaged: Int?
        try log.forEachEntry { bytes, next in
            line += 1
            guard let e = try? JSONParser.parse(Array(bytes)), e.objectValue != nil else {
                damaged = damaged ?? line
                at = next
                return true
            }
            if let d = damaged, e["commit"]?.boolValue == true || e["begin"]?.boolValue == true {
                if e["begin"]?.boolValue == true { damaged = nil } else {
                    throw CloudKitError.internalError("\(log.path): line \(d) is not a tracking entry; remove the file and run 'ck fetch' to fetch the zone again")
                }
            }
            if e["begin"]?.boolValue == true {
                // What an append that never committed left before this one is dropped.
                pending = [(e, at, bytes.count)]
            } else if e["commit"]?.boolValue == true {
                for (p, offset, length) in pending { z.apply(p, offset: offset, length: length) }
                z.commit(e)
                pending = []
            } else {
                pending.append((e, at, bytes.count))
            }
            at = next
            return true
        }
        return z
    }
}

/// Where a record's line is, and what the index keeps of it.
package struct TrackedRecord: Sendable, Equatable {
    package var tag: String?
    package var recordType: String?
    package var offset: Int64
    package var length: Int
}

/// What a zone's committed changes add up to: an index of its records by name, each read back
/// from its line when wanted.
package struct TrackedZone {
    package var fetched: [NameKey: TrackedRecord] = [:]
    package var base: [NameKey: TrackedRecord] = [:]
    package var syncToken: String?
    /// A query's position, per record type (the public database and default zones).
    package var cursor: [String: JSONValue] = [:]
    /// The fetch since the last reset reached the end of the feed (or of every query).
    package var complete = false
    /// Query scans begun, and the scan each fetched record was last seen in: a record a whole
    /// scan did not see is gone from the remote (a query reports no deletions).
    package var scan = 0
    package var seen: [NameKey: Int] = [:]
    let log: AppendLog

    init(log: AppendLog) { self.log = log }

    mutating func apply(_ e: JSONValue, offset: Int64, length: Int) {
        func ref(_ r: JSONValue) -> (NameKey, TrackedRecord)? {
            guard let n = r["recordName"]?.stringValue else { return nil }
            return (NameKey(n), TrackedRecord(tag: r["recordChangeTag"]?.stringValue, recordType: r["recordType"]?.stringValue, offset: offset, length: length))
        }
        if e["reset"]?.boolValue == true {
            fetched = [:]
            seen = [:]
            syncToken = nil
            cursor = [:]
            complete = false
            if e["keepBase"]?.boolValue != true { base = [:] }
        }
        if e["scan"]?.boolValue == true { scan += 1 }
        if let r = e["f"], let (k, t) = ref(r) { fetched[k] = t; seen[k] = scan }
        if let n = e["fd"]?.stringValue { fetched[NameKey(n)] = nil; seen[NameKey(n)] = nil }
        if let r = e["b"], let (k, t) = ref(r) { base[k] = t }
        if let n = e["bd"]?.stringValue { base[NameKey(n)] = nil }
    }

    mutating func commit(_ e: JSONValue) {
        if let t = e["syncToken"] { syncToken = t.stringValue }
        if let c = e["cursor"]?.objectValue { for (k, v) in c { cursor[k] = v } }
        if let c = e["complete"]?.boolValue { complete = c }
    }

    /// Whether the fetched version is not the base (a record the local store has not taken).
    package func differs(_ k: NameKey) -> Bool {
        let f = fetched[k], b = base[k]
        return (f == nil) != (b == nil) || f?.tag != b?.tag
    }

    /// The log, open for reading records back (one descriptor for all of them).
    private let reader = LogReader()
    final class LogReader {
        var fd: Int32 = -1
        deinit { if fd >= 0 { close(fd) } }
    }

    /// The record a line holds.
    package func record(_ r: TrackedRecord?) throws -> JSONValue? {
        guard let r else { return nil }
        if reader.fd < 0 {
            reader.fd = open(log.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard reader.fd >= 0 else { throw FileSystem.failure("cannot open", log.path) }
        }
        let fd = reader.fd
        var buf = [UInt8](repeating: 0, count: r.length)
        var got = 0
        while got < r.length {
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, r.length - got, off_t(r.offset) + off_t(got)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw FileSystem.failure("cannot read", log.path) }
            got += n
        }
        guard let e = try? JSONParser.parse(buf), let rec = e["f"] ?? e["b"] else {
            throw CloudKitError.internalError("\(log.path): no record at byte \(r.offset); remove the file and run 'ck fetch' to fetch the zone again")
        }
        return rec
    }

    package func fetchedRecord(_ k: NameKey) throws -> JSONValue? { try record(fetched[k]) }
    package func baseRecord(_ k: NameKey) throws -> JSONValue? { try record(base[k]) }
}

/// Every remote's tracking state in the data directory, for removing or renaming a remote.
struct RemoteTrackingTree {
    let paths: DataPaths

    /// Every database that tracks a remote (has `remotes/`).
    private func trackingDatabases() throws -> [String] {
        var out: [String] = []
        let containers = paths.root + "/containers"
        for c in try FileSystem.list(containers) {
            for env in ["development", "production"] {
                let e = containers + "/" + c + "/" + env
                var dbs = [e + "/public"]
                for scope in ["private", "shared"] { dbs += try FileSystem.list(e + "/" + scope).map { e + "/" + scope + "/" + $0 } }
                for db in dbs where try FileSystem.exists(db + "/remotes") { out.append(db) }
            }
        }
        return out
    }

    /// The operation lock of `remote` in every database that tracks it, taken only if free:
    /// a remote is removed or renamed only while no fetch, pull or push of it runs (TRY_AGAIN_LATER
    /// otherwise). Held until the list of remotes no longer names it.
    func holdOperations(remote: String) throws -> [FileLock] {
        let name = PathEncoding.component(remote)
        var held: [FileLock] = []
        for db in try trackingDatabases() where try FileSystem.exists(db + "/remotes/" + name) {
            guard let l = try FileLock.attempt(RemoteOperationLock.path(database: db, remote: remote)) else {
                held.forEach { $0.unlock() }
                throw CloudKitError(.tryAgainLater, "a fetch, pull or push of remote '\(remote)' is running; try again when it has finished")
            }
            held.append(l)
        }
        return held
    }

    func removeAll(remote: String) throws {
        let name = PathEncoding.component(remote)
        for db in try trackingDatabases() where try FileSystem.exists(db + "/remotes/" + name) { try FileSystem.removeTree(db + "/remotes/" + name) }
    }

    func renameAll(remote old: String, to new: String) throws {
        let (o, n) = (PathEncoding.component(old), PathEncoding.component(new))
        for db in try trackingDatabases() where try FileSystem.exists(db + "/remotes/" + o) {
            guard let dir = try Directory.open(db + "/remotes") else { continue }
            try dir.rename(o, to: n)
        }
    }
}
