import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only history kept beside a zone (or a database): an AppendLog, `history.log`,
/// committed by its index, `history.idx` (see AppendLogIndex). A zone's holds each change with
/// the whole saved record, so the log is also the write-ahead log everything else is derived
/// from; a database's, its zones created, written and deleted.
///
/// What the history adds to the log: each entry's `seq` is its place in the log (checked on
/// every read), compaction (`ck gc`, HistoryCompaction: entries dropped leave empty slots in the
/// index, and `history.json` says from where the history is retained), and the expiry epoch.
package struct ChangeHistory {
    package let directory: String
    /// The lock its writers hold (the zone's, the database's): a reader that finds a commit a
    /// crash left unindexed takes it, if free, to index that commit (`head`).
    var lockFile: String? {
        switch lock {
        case nil: return nil
        case .file(let f)?: return f
        case .besideZones?: return Self.zoneLockFile(directory)
        }
    }
    /// Where `lockFile` comes from (nil: it has none). A zone's is made from its directory when
    /// asked (seldom), not for every request that opens the zone: making it was 2 % of a lookup.
    private enum Lock {
        case file(String)
        case besideZones
    }
    private let lock: Lock?
    static let logName = "history.log"
    static let indexName = "history.idx"
    static let metaName = "history.json"

    /// A database's history: its entries announce zone commits (RecoveredAnnouncements).
    let announcesZones: Bool

    package init(directory: String, lockFile: String? = nil, announcesZones: Bool = false) {
        self.directory = directory
        self.lock = lockFile.map(Lock.file)
        self.announcesZones = announcesZones
    }

    private init(zone directory: String) {
        self.directory = directory
        self.lock = .besideZones
        self.announcesZones = false
    }

    /// A zone's history (`<database>/zones/<zone>`), with its zone's lock
    /// (`<database>/locks/<zone>.lock`).
    static func ofZone(_ directory: String) -> ChangeHistory { ChangeHistory(zone: directory) }

    /// `<database>/locks/<zone>.lock` for `<database>/zones/<zone>`; nil for a directory that
    /// is not in a `zones` directory.
    private static func zoneLockFile(_ directory: String) -> String? {
        // By bytes, not by Characters.
        let zones = "/zones".utf8
        guard let cut = directory.utf8.lastIndex(of: UInt8(ascii: "/")), directory[..<cut].utf8.suffix(zones.count).elementsEqual(zones)
        else { return nil }
        // Joined as Strings: `+` on a Substring counted its Characters (grapheme breaking) to
        // reserve room.
        let database = String(directory[..<directory.utf8.index(cut, offsetBy: -zones.count)])
        let zone = String(directory[directory.utf8.index(after: cut)...])
        return database + "/locks/" + zone + ".lock"
    }

    var logFile: String { directory + "/" + ChangeHistory.logName }
    var indexFile: String { directory + "/" + ChangeHistory.indexName }
    var metaFile: String { directory + "/" + ChangeHistory.metaName }

    package var log: AppendLog { log(waitingForZones: true) }

    /// The log; a database's recovers the zones its unindexed entries announce before it
    /// indexes them, waiting for a zone another process holds only when `waitingForZones`.
    func log(waitingForZones: Bool) -> AppendLog {
        var l = AppendLog(directory: directory, name: ChangeHistory.logName, commit: .index(name: ChangeHistory.indexName, noun: "history index"), noun: "history log")
        if announcesZones {
            let directory = self.directory
            l.beforeIndexingTail = { try RecoveredAnnouncements.recoverZones(announcedBy: $0, in: directory, waiting: waitingForZones) }
        }
        return l
    }

    // MARK: reading

    /// Sequence number of the newest committed entry (0 for an empty history).
    package func head() throws -> Int64 {
        func read() throws -> Int64 {
            guard let dir = try Directory.open(directory) else { return 0 }
            let head = try committedHead(dir)
            // A log longer than its index's head holds a commit in flight (its writer holds the
            // lock) or one a crash left unindexed: a process killed between the log's sync and
            // the index words, or a machine stopped before the words reached the disk, when
            // the commit had been answered. The latter is indexed here, under the lock, so that
            // no reader goes on without what a client was told (a read-only data directory, or
            // a lock held, leaves it to the next writer).
            // The lock's path is made only once there is a tail to index.
            guard lock != nil, try hasUnindexedTail(dir, head: head), let lockFile, let lock = try? FileLock.attempt(lockFile) else { return head.seq }
            defer { lock.unlock() }
            return (try? recoverHead(waitingForZones: false)) ?? head.seq
        }
        // A database's is read each time: a writer killed before its entry's index words leaves
        // the index file as it was, so a head kept on the index's stamp would keep the feed from
        // announcing a commit its zone shows, until the next write (a zone's commit stopped that
        // way was never answered, and its zone's next writer indexes it). Every read of a zone
        // asks this; a quiet zone history's answer is kept (StampedFiles).
        if announcesZones { return try read() }
        return try StampedFiles.shared.historyHead(indexFile, read) ?? read()
    }

    /// The committed head: its last entry's seq, and the log length it covers.
    func committedHead(_ dir: Directory) throws -> AppendLog.Head { try log.head(dir) }

    /// Whether the log holds more than the committed `head` covers (`head` itself by default).
    func hasUnindexedTail(_ dir: Directory, head: AppendLog.Head? = nil) throws -> Bool {
        Int64(dir.status(of: ChangeHistory.logName)?.st_size ?? 0) > (try head ?? committedHead(dir)).end
    }

    /// Streams committed entries with seq > `after` (up to `through`, default the head), oldest
    /// first, as the JSON of their lines (typed: `forEachEntry`, `forEachDatabaseEntry`);
    /// `body` returns false to stop. Every entry is checked against its index word and
    /// its own `seq`, so a reader racing a writer's repair re-reads instead of misreading.
    ///
    /// After `ck gc` (HistoryCompaction) the entries before `retainedFrom()` are gone but for
    /// those that wrote a version still current then. Reading from the start (`after: 0`, or
    /// `skipCompacted`) yields what remains — the compacted state, then every later change;
    /// reading from a point inside the compacted part throws CHANGE_TOKEN_EXPIRED, since the
    /// changes after that point can no longer be told.
    func forEachLine(after: Int64, through: Int64? = nil, skipCompacted: Bool = false, _ body: (JSONValue) throws -> Bool) throws {
        try forEachCommitted(after: after, through: through, skipCompacted: skipCompacted, read: ChangeHistory.parsedLine, body)
    }

    /// A committed line's JSON, checked to carry its own `seq`; a line that is not JSON, or
    /// carries another seq, is damage (read again, then reported).
    static func parsedLine(_ seq: Int64, _ bytes: ArraySlice<UInt8>) throws -> JSONValue {
        let entry: JSONValue
        do { entry = try JSONParser.parse(Array(bytes)) } catch {
            throw AppendLog.Damage(seq: seq, what: "entry is not valid JSON")
        }
        guard entry["seq"]?.int64Value == seq else {
            throw AppendLog.Damage(seq: seq, what: "entry carries seq \(entry["seq"].map(JSONWriter.compact) ?? "none")")
        }
        return entry
    }

    /// `forEachLine`, each committed line read by `read` (given its seq and bytes).
    func forEachCommitted<T>(after: Int64, through: Int64? = nil, skipCompacted: Bool = false,
                             read: (Int64, ArraySlice<UInt8>) throws -> T, _ body: (T) throws -> Bool) throws {
        var from = after
        let skipping = skipCompacted || after == 0
        var attempt = 0
        var waits = 0
        while true {
            do {
                let first = try retainedFrom()
                if !skipping && from < first - 1 { throw HistoryCompaction.compacted(directory, first: first) }
                try log.forEachIndexed(after: from, through: through, emptyBefore: skipping ? first : 1) { seq, bytes in
                    let entry = try read(seq, bytes)
                    from = seq
                    return try body(entry)
                }
                return
            } catch let d as AppendLog.Damage {
                // A compaction switching its files: wait for it rather than report damage.
                if waits < 200, (try? FileSystem.exists(directory + "/" + HistoryCompaction.markerName)) == true {
                    waits += 1
                    usleep(20_000)
                    continue
                }
                attempt += 1
                if attempt == 3 {
                    throw CloudKitError.internalError("the history in '\(directory)' is damaged at entry \(d.seq): \(d.what)").with(.repairDataDirectory)
                }
            }
        }
    }

    /// The lines of entries with seq > `after`, at most `limit` of them (nil: all), oldest first.
    package func lines(after: Int64, limit: Int? = nil) throws -> [JSONValue] {
        var out: [JSONValue] = []
        try forEachLine(after: after) { e in
            out.append(e)
            return limit.map { out.count < $0 } ?? true
        }
        return out
    }

    // MARK: writing (the caller holds the lock)

    typealias TailFinding = AppendLog.TailFinding

    /// Finishes a compaction a crash interrupted, then cuts what lies beyond the committed
    /// history — a commit a crash or a full disk interrupted — and says what it found. The
    /// caller holds the history's lock.
    @discardableResult
    func cutUncommittedTail(repair: Bool = true) throws -> [TailFinding] {
        guard let dir = try Directory.open(directory) else { return [] }
        var found: [TailFinding] = []
        if let f = try HistoryCompaction.finishInterrupted(self, dir, repair: repair) { found.append(f) }
        return found + (try log.cutTail(repair: repair))
    }

    /// Appends entries (their `seq` continuing from the head) as one commit (AppendLog's
    /// `index` commit): a failure changes nothing readers can see. Returns the new head.
    /// The caller holds the history's lock.
    @discardableResult
    package func append(_ entries: [JSONValue], beforeIndexing: (() throws -> Void)? = nil, keepsOnceReady: Bool = false) throws -> Int64 {
        try appendLines(entries, firstSeq: entries.first?["seq"]?.int64Value, beforeIndexing: beforeIndexing, keepsOnceReady: keepsOnceReady)
    }

    /// `append` of a commit's record entries, each encoded straight to its line.
    @discardableResult
    package func append(_ entries: [HistoryEntry], beforeIndexing: (() throws -> Void)? = nil) throws -> Int64 {
        try appendLines(entries, firstSeq: entries.first?.seq, beforeIndexing: beforeIndexing)
    }

    /// `append` of one entry, numbered from the head the append finds (`entry` is given its
    /// seq): a writer that holds the lock need not look at the head first. Returns the new head.
    @discardableResult
    package func append(numbered entry: (_ seq: Int64) -> some JSONEncodable, beforeIndexing: (() throws -> Void)? = nil,
                        keepsOnceReady: Bool = false) throws -> Int64 {
        let dir = try Directory.open(directory, create: true)!
        // As appendLines: an interrupted compaction's switch is finished first, looked at every time.
        _ = try HistoryCompaction.finishInterrupted(self, dir, repair: true, sweep: false)
        return try log.appendIndexed(dir, beforeIndexing: beforeIndexing, keepsOnceReady: keepsOnceReady) { seq in
            var line = [UInt8]()
            entry(seq).encodeJSON(into: &line, indent: 0, pretty: false)
            return [line]
        }.seq
    }

    /// Brings the head up to what the log holds — a commit a crash left unindexed is indexed,
    /// an unfinished one cut (AppendLog.indexTail) — and returns it: what a writer numbers its
    /// entries from. The caller holds the history's lock.
    @discardableResult
    package func recoverHead(waitingForZones: Bool = true) throws -> Int64 {
        guard let dir = try Directory.open(directory) else { return 0 }
        // A compaction's switch a crash interrupted first: the tail is judged against the
        // files it left in place.
        _ = try HistoryCompaction.finishInterrupted(self, dir, repair: true, sweep: false)
        return try log(waitingForZones: waitingForZones).indexTail(dir, repair: true).head.seq
    }

    private func appendLines(_ entries: [some JSONEncodable], firstSeq: Int64?, beforeIndexing: (() throws -> Void)? = nil,
                             keepsOnceReady: Bool = false) throws -> Int64 {
        guard !entries.isEmpty else { return try head() }
        let dir = try Directory.open(directory, create: true)!
        // Looked at every time, never taken from the write counters: a `ck gc` killed between
        // writing its marker and counting the write would otherwise let this append go to the
        // log its switch is about to replace.
        _ = try HistoryCompaction.finishInterrupted(self, dir, repair: true, sweep: false)
        func line(_ i: Int) -> [UInt8] {
            var line = [UInt8]()
            entries[i].encodeJSON(into: &line, indent: 0, pretty: false)
            return line
        }
        // A large batch's lines (each holds a whole saved record) are encoded on every core.
        let lines = Parallel.map(entries.count, chunk: 16, parallelFrom: RecordFileWriter.parallelFrom, line)
        return try log.append(lines, in: dir, firstSeq: firstSeq, beforeIndexing: beforeIndexing, keepsOnceReady: keepsOnceReady).seq
    }

    // MARK: expiry

    /// How many times the retained history was dropped: tokens issued in an earlier epoch are
    /// CHANGE_TOKEN_EXPIRED.
    func epoch() throws -> Int64 {
        try readMeta()?["epoch"]?.int64Value ?? 0
    }

    /// Drops the retained history up to now, as CloudKit's server does on its own schedule:
    /// every token issued so far expires; tokens issued from now on work.
    package func expire() throws {
        var meta = try FileSystem.readJSON(metaFile)?.objectValue ?? [:]
        meta["schemaVersion"] = .int(FileFormat.schemaVersion)
        meta["epoch"] = .int(try epoch() + 1)
        meta["expiredAt"] = .int(try head())
        try FileSystem.writeJSON(metaFile, .object(meta))
    }

    /// The last deletion a compaction dropped (0: none): a fetch from scratch whose point lies
    /// before it could miss that deletion of a record it already returned. A history compacted
    /// by an earlier ck, which did not record it, may have dropped one anywhere before
    /// `retainedFrom()`.
    func deletionsDroppedThrough() throws -> Int64 {
        let meta = try readMeta()
        if let d = meta?["deletionsDroppedThrough"]?.int64Value { return d }
        return max(0, (meta?["retainedFrom"]?.int64Value ?? 1) - 1)
    }

    /// The first entry every later one is kept from (1 unless `ck gc` compacted the history):
    /// a token or reference before `retainedFrom() - 1` names a point no longer retained.
    package func retainedFrom() throws -> Int64 {
        max(1, try readMeta()?["retainedFrom"]?.int64Value ?? 1)
    }

    /// `history.json`, asked several times by every page of a change feed: written whole and
    /// renamed into place, so kept while `lstat` shows the same file (absent in most zones).
    private func readMeta() throws -> JSONValue? { try StampedFiles.shared.readJSON(metaFile) }
}
