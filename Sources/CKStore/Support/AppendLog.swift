import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only log of entries, one line each (a compact JSON object and a newline): the
/// zone and database histories (`history.log`), the notification inboxes (`log.ndjson`) and the
/// account events (`account-events.ndjson`). Only a prefix of the file is committed; what lies
/// beyond it is what a crash or a full disk left of an append that never committed.
///
/// What it guarantees, whichever way its owner marks a commit (`Commit`):
/// - `append` writes a batch of entries after the committed end, cutting whatever lay beyond
///   it first, and syncs them before it returns; a failure before the commit point leaves the
///   committed log exactly as it was (what was written is cut now, or by the next writer).
/// - Readers see committed entries only, whole, in order, and never the bytes of a torn or
///   uncommitted tail.
/// - `cutTail` finds the bytes beyond the committed end, says what they are (`ck fsck`'s
///   findings) and, repairing, cuts them; after a cut the log reads and appends as if the
///   interrupted append had never begun.
/// The caller holds its owner's lock for `append`, `cutTail` and `rewrite`.
/// How an entry is framed and synced is decided here only, so a change to the framing (a
/// checksum per entry) or to the syncs (one per group of appends) is made in this file and the
/// two beside it (AppendLogIndex, AppendLogLines).
package struct AppendLog {
    package let directory: String
    package let name: String
    package let commit: Commit
    /// How `ck fsck` names it: "history log", "notification log", "account event log".
    package let noun: String

    /// How an append is marked committed.
    package enum Commit {
        /// An index file beside the log (`history.idx`): per entry, 8 bytes big-endian, its end
        /// offset in the log, with the top bit set on the last entry of each commit. An append
        /// is committed by its lines, each with its checksum, the last marked, synced; the index
        /// words follow, unsynced, and say what readers see (AppendLogIndex). The index also
        /// finds entry `n` without reading those before it.
        case index(name: String, noun: String)
        /// The owner records the committed length itself (an inbox's `state.json`), and commits
        /// an append by recording the end `append` returns; this is the length it recorded.
        case recorded(end: Int64)
        /// Each whole line is committed as it is written; a torn last line is not.
        case wholeLines
    }

    /// Where the committed log ends: how many entries it holds (the last one's sequence
    /// number; for `recorded`, not known and 0) and its length in bytes.
    package struct Head: Equatable {
        package var seq: Int64
        package var end: Int64
        package init(seq: Int64, end: Int64) {
            self.seq = seq
            self.end = end
        }
    }

    /// Run by `indexTail` with the entries a crash left unindexed, before it indexes them (a
    /// database's history: RecoveredAnnouncements); if it throws, they stay unindexed.
    var beforeIndexingTail: (([JSONValue]) throws -> Void)?

    package init(directory: String, name: String, commit: Commit, noun: String) {
        self.directory = directory
        self.name = name
        self.commit = commit
        self.noun = noun
    }

    package var path: String { directory + "/" + name }

    /// The committed head (a log not yet made is empty).
    package func head() throws -> Head {
        guard let dir = try Directory.open(directory) else { return Head(seq: 0, end: 0) }
        return try head(dir)
    }

    package func head(_ dir: Directory) throws -> Head {
        switch commit {
        case .index: return try indexedHead(dir)
        case .recorded(let end): return Head(seq: 0, end: end)
        case .wholeLines: return try wholeLinesHead(dir)
        }
    }

    // MARK: appending

    /// Appends `entries` (each the bytes of one line, without its newline) as one commit, and
    /// returns the new head (for `wholeLines`, its `seq` counts only the lines appended). For `recorded`, the owner commits it by recording `head.end`;
    /// for `index`, a failure leaves nothing readers can see (AppendLogIndex).
    @discardableResult
    package func append(_ entries: [[UInt8]]) throws -> Head {
        try append(entries, in: try Directory.open(directory, create: true)!)
    }

    /// `append` through the log's directory, already open (the owner looked at it first:
    /// opening it again would cost a path walk a commit).
    /// `firstSeq`: for an indexed log, the number the first entry carries; an append whose
    /// entries were numbered from a head that is not the log's (a crash's commit indexed since)
    /// is refused before anything is written.
    /// `beforeIndexing` (indexed logs): run once the entries are durable, before readers can
    /// see them; if it throws, the entries are taken back and the append fails.
    /// `keepsOnceReady`: once `beforeIndexing` has returned, the entries are relied on and never
    /// taken back; should their index words not be written, the next holder of the lock
    /// indexes them.
    @discardableResult
    package func append(_ entries: [[UInt8]], in dir: Directory, firstSeq: Int64? = nil, beforeIndexing: (() throws -> Void)? = nil,
                        keepsOnceReady: Bool = false) throws -> Head {
        if case .index = commit {
            return try appendIndexed(entries, dir, firstSeq: firstSeq, beforeIndexing: beforeIndexing, keepsOnceReady: keepsOnceReady)
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(entries.reduce(0) { $0 + $1.count + 1 })
        for e in entries { bytes += e; bytes.append(0x0A) }
        let f = try dir.openForWriting(name)
        defer { close(f) }
        let committed: Head
        switch commit {
        case .index: preconditionFailure("an indexed log is appended by appendIndexed")
        case .recorded(let end):
            committed = Head(seq: 0, end: end)
            if ftruncate(f, off_t(end)) != 0 { throw FileSystem.failure("cannot truncate", path) }
            try FileSystem.writeAt(f, bytes, offset: end, path: path, rollback: true)
            try FileSystem.fsync(f, path: path)
        case .wholeLines:
            // Only where the last whole line ends matters here: found from the end, so an
            // append costs the same whatever the log's length (`seq` is not counted).
            committed = Head(seq: 0, end: try wholeLinesEnd(dir))
            var st = stat()
            guard fstat(f, &st) == 0 else { throw FileSystem.failure("cannot stat", path) }
            if Int64(st.st_size) > committed.end { try dir.truncate(name, to: committed.end) }
            try FileSystem.writeAt(f, bytes, offset: committed.end, path: path, rollback: true)
            do { try FileSystem.fsync(f, path: path) } catch {
                FileSystem.takeBack(f, to: committed.end, path: path)
                throw error
            }
        }
        return Head(seq: committed.seq + Int64(entries.count), end: committed.end + Int64(bytes.count))
    }

    /// Replaces the whole log with `entries`, atomically (a repair: `ck fsck` dropping damaged
    /// lines). Only for `wholeLines`, whose commit is the file itself.
    func rewrite(_ entries: [[UInt8]]) throws {
        precondition({ if case .wholeLines = commit { return true } else { return false } }())
        var bytes = [UInt8]()
        for e in entries { bytes += e; bytes.append(0x0A) }
        try FileSystem.writeAtomically(path, bytes)
    }

    // MARK: the tail

    /// What `cutTail` found: bytes it cuts, or damage it can only report.
    struct TailFinding {
        package var problem: String
        var repairable: Bool
        /// How many bytes lie beyond the committed end.
        package var bytes: Int64 = 0
    }

    /// Finds what lies beyond the committed end — an append a crash or a full disk
    /// interrupted — and, with `repair`, cuts it.
    @discardableResult
    func cutTail(repair: Bool = true) throws -> [TailFinding] {
        guard let dir = try Directory.open(directory) else { return [] }
        if case .index = commit { return try indexTail(dir, repair: repair).findings }
        let head = try head(dir)
        var found: [TailFinding] = []
        let size = Int64(dir.status(of: name)?.st_size ?? 0)
        let beyond = size - head.end
        if beyond > 0 {
            let problem: String
            switch commit {
            case .index: preconditionFailure("an indexed log's tail is found by indexTail")
            case .recorded: problem = "\(noun) holds \(beyond) bytes after its committed end (a delivery that never completed)"
            case .wholeLines: problem = "\(noun) ends in a torn line (\(beyond) bytes of an interrupted append)"
            }
            found.append(.init(problem: problem, repairable: true, bytes: beyond))
            if repair { try dir.truncate(name, to: head.end) }
        }
        return found
    }
}
