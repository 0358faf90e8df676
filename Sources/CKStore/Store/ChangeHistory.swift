import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only history kept beside a zone (or a database): `history.log` holds one JSON
/// entry per line — for a zone, each change with the whole saved record, so the log is also the
/// write-ahead log everything else is derived from — and `history.idx` holds, per entry, 8
/// bytes big-endian: the entry's end offset in the log, with the top bit set on the last entry
/// of each commit.
///
/// The index defines the history: entry `seq` is committed when an entry at or after it carries
/// the commit bit. Bytes beyond the last committed entry, in either file, are what a crash or a
/// full disk left of a commit that never happened; readers never look at them and the next
/// writer cuts them, under the lock, before it appends.
package struct ChangeHistory {
    public let directory: String
    package static let logName = "history.log"
    package static let indexName = "history.idx"
    package static let metaName = "history.json"
    package static let commitBit: UInt64 = 1 << 63

    public init(directory: String) { self.directory = directory }

    public var logFile: String { directory + "/" + ChangeHistory.logName }
    public var indexFile: String { directory + "/" + ChangeHistory.indexName }
    public var metaFile: String { directory + "/" + ChangeHistory.metaName }

    /// Where the committed history ends: its last sequence number and the log length it covers.
    public struct Head: Equatable {
        public var seq: Int64
        public var logEnd: Int64
    }

    // MARK: reading

    /// Sequence number of the newest committed entry (0 for an empty history).
    public func head() throws -> Int64 {
        func read() throws -> Int64 {
            guard let dir = try Directory.open(directory) else { return 0 }
            return try committedHead(dir).seq
        }
        // Every read of a zone asks this; a quiet history's answer is kept (StampedFiles).
        return try StampedFiles.shared.historyHead(indexFile, read) ?? read()
    }

    package func committedHead(_ dir: Directory) throws -> Head {
        guard let f = try dir.openFile(ChangeHistory.indexName) else { return Head(seq: 0, logEnd: 0) }
        defer { close(f) }
        var st = stat()
        guard fstat(f, &st) == 0 else { throw FileSystem.failure("cannot stat", indexFile) }
        var n = Int64(st.st_size) / 8
        // Look back from the end for the last entry carrying the commit bit.
        while n > 0 {
            let count = min(n, 512)
            let words = try readIndex(f, from: n - count, count: count)
            for i in stride(from: words.count - 1, through: 0, by: -1) where words[i] & ChangeHistory.commitBit != 0 {
                return Head(seq: n - count + Int64(i) + 1, logEnd: Int64(words[i] & ~ChangeHistory.commitBit))
            }
            n -= count
        }
        return Head(seq: 0, logEnd: 0)
    }

    /// `count` index words starting at entry index `first` (0-based).
    package func readIndex(_ f: Int32, from first: Int64, count: Int64) throws -> [UInt64] {
        var bytes = [UInt8](repeating: 0, count: Int(count) * 8)
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(f, $0.baseAddress! + got, $0.count - got, off_t(first * 8) + off_t(got)) }
            if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", indexFile) }
            if n == 0 { break }
            got += n
        }
        return stride(from: 0, to: got - got % 8, by: 8).map { i in
            bytes[i..<i + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
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
    public func forEachLine(after: Int64, through: Int64? = nil, skipCompacted: Bool = false, _ body: (JSONValue) throws -> Bool) throws {
        var from = after
        let skipping = skipCompacted || after == 0
        var attempt = 0
        var waits = 0
        while true {
            do {
                let first = try retainedFrom()
                if !skipping && from < first - 1 { throw HistoryCompaction.compacted(directory, first: first) }
                try scan(after: from, through: through, compactedBefore: skipping ? first : 1) { seq, e in
                    from = seq
                    return try body(e)
                }
                return
            } catch let d as Damage {
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

    package struct Damage: Error {
        package var seq: Int64
        package var what: String
    }

    /// `compactedBefore`: entries before it may have been dropped by a compaction (an empty
    /// slot in the index), and are skipped; anywhere else an empty slot is damage.
    private func scan(after: Int64, through: Int64?, compactedBefore: Int64 = 1, _ body: (Int64, JSONValue) throws -> Bool) throws {
        guard let dir = try Directory.open(directory) else { return }
        let head = try committedHead(dir)
        let last = min(through ?? head.seq, head.seq)
        guard after < last else { return }
        guard let idx = try dir.openFile(ChangeHistory.indexName), let log = try dir.openFile(ChangeHistory.logName) else {
            throw Damage(seq: after + 1, what: "a history file is missing")
        }
        defer { close(idx); close(log) }
        var start: Int64 = 0
        if after > 0 {
            guard let w = try readIndex(idx, from: after - 1, count: 1).first else { throw Damage(seq: after, what: "index entry missing") }
            start = Int64(w & ~ChangeHistory.commitBit)
        }
        var seq = after
        // buffer[used...] holds the log from offset `at` on.
        var buffer = [UInt8]()
        var used = 0
        var at = start
        while seq < last {
            let words = try readIndex(idx, from: seq, count: min(last - seq, 4096))
            if words.isEmpty { throw Damage(seq: seq + 1, what: "index entry missing") }
            for w in words {
                seq += 1
                let end = Int64(w & ~ChangeHistory.commitBit)
                if end == at && seq < compactedBefore { continue }
                guard end > at else { throw Damage(seq: seq, what: "index entries are out of order") }
                while at + Int64(buffer.count - used) < end {
                    if used > 0 { buffer.removeFirst(used); used = 0 }
                    let want = max(Int(end - at) - buffer.count, 65536)
                    var chunk = [UInt8](repeating: 0, count: want)
                    let n = chunk.withUnsafeMutableBytes { pread(log, $0.baseAddress, want, off_t(at) + off_t(buffer.count)) }
                    if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", logFile) }
                    if n == 0 { throw Damage(seq: seq, what: "the log is shorter than its index says") }
                    buffer.append(contentsOf: chunk[0..<n])
                }
                let lineEnd = used + Int(end - at)
                guard buffer[lineEnd - 1] == 0x0A else { throw Damage(seq: seq, what: "the log does not hold the entry its index points to") }
                let entry: JSONValue
                do { entry = try JSONParser.parse(Array(buffer[used..<lineEnd - 1])) } catch {
                    throw Damage(seq: seq, what: "entry is not valid JSON")
                }
                guard entry["seq"]?.int64Value == seq else {
                    throw Damage(seq: seq, what: "entry carries seq \(entry["seq"].map(JSONWriter.compact) ?? "none")")
                }
                used = lineEnd
                at = end
                if try !body(seq, entry) { return }
            }
        }
    }

    /// The lines of entries with seq > `after`, at most `limit` of them (nil: all), oldest first.
    public func lines(after: Int64, limit: Int? = nil) throws -> [JSONValue] {
        var out: [JSONValue] = []
        try forEachLine(after: after) { e in
            out.append(e)
            return limit.map { out.count < $0 } ?? true
        }
        return out
    }

    /// The line of one committed entry by its sequence number (nil: past the head, or dropped
    /// by `ck gc`).
    public func line(_ seq: Int64) throws -> JSONValue? {
        guard seq >= 1 else { return nil }
        var out: JSONValue?
        try forEachLine(after: seq - 1, through: seq, skipCompacted: true) { e in
            if e["seq"]?.int64Value == seq { out = e }
            return false
        }
        return out
    }

    // MARK: writing (the caller holds the lock)

    /// What `cutUncommittedTail` found: a tail it cuts, or damage it can only report.
    public struct TailFinding {
        public var problem: String
        public var repairable: Bool
    }

    /// Cuts what lies beyond the committed history — a commit a crash or a full disk
    /// interrupted — and says what it found. The caller holds the history's lock.
    @discardableResult
    public func cutUncommittedTail(repair: Bool = true) throws -> [TailFinding] {
        guard let dir = try Directory.open(directory) else { return [] }
        var found: [TailFinding] = []
        if let f = try HistoryCompaction.finishInterrupted(self, dir, repair: repair) { found.append(f) }
        let head = try committedHead(dir)
        let idxSize = Int64(dir.status(of: ChangeHistory.indexName)?.st_size ?? 0)
        let logSize = Int64(dir.status(of: ChangeHistory.logName)?.st_size ?? 0)
        if idxSize > head.seq * 8 {
            found.append(.init(problem: "history index holds \(idxSize - head.seq * 8) bytes after its last committed entry (a commit that never completed)", repairable: true))
            if repair { try dir.truncate(ChangeHistory.indexName, to: head.seq * 8) }
        }
        if logSize > head.logEnd {
            found.append(.init(problem: "history log holds \(logSize - head.logEnd) bytes after its last committed entry (a commit that never completed)", repairable: true))
            if repair { try dir.truncate(ChangeHistory.logName, to: head.logEnd) }
        } else if logSize < head.logEnd {
            found.append(.init(problem: "history log is shorter (\(logSize) bytes) than its committed entries (\(head.logEnd) bytes): entries are lost", repairable: false))
        }
        return found
    }

    /// Appends entries (their `seq` continuing from the head) as one commit:
    /// 1. the log bytes, then fsync;
    /// 2. the index words, without the commit bit, then fsync;
    /// 3. the commit bit, set by a one-byte write in the last word — the point of no return: from
    ///    here readers see the commit, so it is never taken back — then fsync.
    /// A failure before 3 (a full disk, an I/O error) cuts both files back: nothing changed. A
    /// failure of the last fsync leaves the commit in place and is reported as
    /// `CommittedButNotSynced`. Returns the new head. The caller holds the history's lock.
    @discardableResult
    public func append(_ entries: [JSONValue]) throws -> Int64 { try appendLines(entries) }

    /// `append` of a commit's record entries, each encoded straight to its line.
    @discardableResult
    package func append(_ entries: [HistoryEntry]) throws -> Int64 { try appendLines(entries) }

    private func appendLines(_ entries: [some JSONEncodable]) throws -> Int64 {
        guard !entries.isEmpty else { return try head() }
        let dir = try Directory.open(directory, create: true)!
        try cutUncommittedTail()
        let head = try committedHead(dir)
        func line(_ i: Int) -> [UInt8] {
            var line = [UInt8]()
            entries[i].encodeJSON(into: &line, indent: 0, pretty: false)
            line.append(0x0A)
            return line
        }
        // A large batch's lines (each holds a whole saved record) are encoded on every core.
        let lines = entries.count >= RecordFileWriter.parallelFrom ? Parallel.map(entries.count, chunk: 16, line) : entries.indices.map(line)
        var log = [UInt8]()
        log.reserveCapacity(lines.reduce(0) { $0 + $1.count })
        var idx = [UInt8]()
        idx.reserveCapacity(lines.count * 8)
        for line in lines {
            log.append(contentsOf: line)
            let word = UInt64(head.logEnd) + UInt64(log.count)
            for s in stride(from: 56, through: 0, by: -8) { idx.append(UInt8((word >> UInt64(s)) & 0xff)) }
        }
        let lf = try dir.openForWriting(ChangeHistory.logName)
        defer { close(lf) }
        let xf = try dir.openForWriting(ChangeHistory.indexName)
        defer { close(xf) }
        let lastWord = (head.seq + Int64(entries.count) - 1) * 8
        do {
            try FileSystem.writeAt(lf, log, offset: head.logEnd, path: logFile, rollback: false)
            try FileSystem.fsync(lf, path: logFile)
            try FileSystem.writeAt(xf, idx, offset: head.seq * 8, path: indexFile, rollback: false)
            try FileSystem.fsync(xf, path: indexFile)
            // The commit: one byte, the top of the last word (big-endian), which no disk writes
            // half of.
            try FileSystem.overwrite(xf, [idx[idx.count - 8] | 0x80], offset: lastWord, path: indexFile)
        } catch {
            _ = ftruncate(xf, off_t(head.seq * 8))
            _ = ftruncate(lf, off_t(head.logEnd))
            throw error
        }
        do { try FileSystem.fsync(xf, path: indexFile, overwrite: true) } catch let e as CloudKitError {
            throw CommittedButNotSynced(reason: e.reason)
        }
        return head.seq + Int64(entries.count)
    }

    /// A commit readers can already see, but the disk would not confirm durable.
    public struct CommittedButNotSynced: Error {
        public var reason: String
    }

    // MARK: expiry

    /// How many times the retained history was dropped: tokens issued in an earlier epoch are
    /// CHANGE_TOKEN_EXPIRED.
    public func epoch() throws -> Int64 {
        try readMeta()?["epoch"]?.int64Value ?? 0
    }

    /// Drops the retained history up to now, as CloudKit's server does on its own schedule:
    /// every token issued so far expires; tokens issued from now on work.
    public func expire() throws {
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
    package func deletionsDroppedThrough() throws -> Int64 {
        let meta = try readMeta()
        if let d = meta?["deletionsDroppedThrough"]?.int64Value { return d }
        return max(0, (meta?["retainedFrom"]?.int64Value ?? 1) - 1)
    }

    /// The first entry every later one is kept from (1 unless `ck gc` compacted the history):
    /// a token or reference before `retainedFrom() - 1` names a point no longer retained.
    public func retainedFrom() throws -> Int64 {
        max(1, try readMeta()?["retainedFrom"]?.int64Value ?? 1)
    }

    /// `history.json`, asked several times by every page of a change feed: written whole and
    /// renamed into place, so kept while `lstat` shows the same file (absent in most zones).
    private func readMeta() throws -> JSONValue? { try StampedFiles.shared.readJSON(metaFile) }
}
