import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `index` commit (AppendLog.Commit): an index file beside the log holds, per entry, its
/// end offset in the log (8 bytes big-endian), with the top bit set on the last entry of each
/// commit. The index defines the log: entry `n` is committed when an entry at or after it
/// carries the commit bit, and entry `n`'s word is at `(n - 1) * 8`, so it is found without
/// reading the ones before it.
extension AppendLog {
    static let commitBit: UInt64 = 1 << 63

    var indexName: String {
        guard case .index(let name, _) = commit else { preconditionFailure("\(path) has no index") }
        return name
    }

    var indexPath: String { directory + "/" + indexName }

    /// The 8 bytes of an index word: an entry ending at `end`, the last of its commit or not.
    static func indexWord(end: Int64, commits: Bool) -> [UInt8] {
        let word = (UInt64(end) | (commits ? commitBit : 0)).bigEndian
        return withUnsafeBytes(of: word) { Array($0) }
    }

    func indexedHead(_ dir: Directory) throws -> Head {
        guard let (f, st) = try dir.openFileWithStatus(indexName) else { return Head(seq: 0, end: 0) }
        defer { close(f) }
        return try indexedHead(f, size: Int64(st.st_size))
    }

    /// The head of the index open as `f`, `size` bytes long.
    func indexedHead(_ f: Int32, size: Int64) throws -> Head {
        var n = size / 8
        // Look back from the end for the last entry carrying the commit bit: almost always the
        // last word, so a few words first (every append reads the head), then larger steps.
        var step: Int64 = 8
        while n > 0 {
            let count = min(n, step)
            step = 512
            let words = try readIndex(f, from: n - count, count: count)
            for i in stride(from: words.count - 1, through: 0, by: -1) where words[i] & AppendLog.commitBit != 0 {
                return Head(seq: n - count + Int64(i) + 1, end: Int64(words[i] & ~AppendLog.commitBit))
            }
            n -= count
        }
        return Head(seq: 0, end: 0)
    }

    /// `count` index words starting at entry index `first` (0-based), of the index open as `f`.
    func readIndex(_ f: Int32, from first: Int64, count: Int64) throws -> [UInt64] {
        var bytes = [UInt8](repeating: 0, count: Int(count) * 8)
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(f, $0.baseAddress! + got, $0.count - got, off_t(first * 8) + off_t(got)) }
            if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", indexPath) }
            if n == 0 { break }
            got += n
        }
        // Each word loaded whole (a byte-by-byte fold was most of a head's reading).
        return bytes.withUnsafeBytes { raw in
            (0..<got / 8).map { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
        }
    }

    /// Appends entries as one commit, with one sync:
    /// 1. the log bytes, each line framed with its checksum and the last marked as ending the
    ///    commit (AppendLogFraming), then `fdatasync` of the log — the commit is durable;
    /// 2. the index words, the commit bit on the last, written and not synced: the index is
    ///    derived from the log, and readers find entries through it, so they see the commit from
    ///    here on, never before it is durable.
    /// A failure in 1 cuts the log back, the cut synced (a failed sync may have written the
    /// commit all the same): nothing changed. A failure in 2 (a full disk growing
    /// the index) takes the entries back too (cut, then synced), so a failed append is never
    /// found committed later. A crash between 1 and 2 leaves a durable commit the index does not
    /// cover yet: the next writer indexes it (`indexTail`), and readers see it from then on.
    func appendIndexed(_ entries: [[UInt8]], _ dir: Directory, firstSeq: Int64? = nil, beforeIndexing: (() throws -> Void)? = nil,
                       keepsOnceReady: Bool = false) throws -> Head {
        try appendIndexed(dir, beforeIndexing: beforeIndexing, keepsOnceReady: keepsOnceReady) { next in
            if let first = firstSeq, !entries.isEmpty, first != next {
                throw CloudKitError.internalError("entries numbered from \(first) cannot follow entry \(next - 1) of '\(path)' (its head moved: take it again under the lock)")
            }
            return entries
        }
    }

    /// `appendIndexed` of the entries `numbered` makes, numbered from the head the append finds
    /// (its first entry's seq is given): the head is not looked at separately first.
    func appendIndexed(_ dir: Directory, beforeIndexing: (() throws -> Void)? = nil, keepsOnceReady: Bool = false,
                       numbered: (_ firstSeq: Int64) throws -> [[UInt8]]) throws -> Head {
        // The index and the log, open for the append; their sizes say whether anything lies
        // beyond the committed head (rarely: a crash's), which is dealt with first.
        let (xf, xst) = try dir.openForWritingWithStatus(indexName)
        defer { close(xf) }
        var head = try indexedHead(xf, size: Int64(xst.st_size))
        let (lf, lst) = try dir.openForWritingWithStatus(name)
        defer { close(lf) }
        if Int64(xst.st_size) != head.seq * 8 || Int64(lst.st_size) != head.end {
            head = try indexTail(dir, repair: true).head
        }
        let entries = try numbered(head.seq + 1)
        guard !entries.isEmpty else { return head }
        var log = [UInt8]()
        log.reserveCapacity(entries.reduce(0) { $0 + $1.count + AppendLogFraming.prefixLength + AppendLogFraming.commitMember.count + 1 })
        var idx = [UInt8]()
        idx.reserveCapacity(entries.count * 8)
        for (i, e) in entries.enumerated() {
            let last = i == entries.count - 1
            log += AppendLogFraming.frame(e, commits: last)
            log.append(0x0A)
            idx += AppendLog.indexWord(end: head.end + Int64(log.count), commits: last)
        }
        do {
            try FileSystem.writeAt(lf, log, offset: head.end, path: path, rollback: false)
            try FileSystem.datasync(lf, path: path)
        } catch {
            FileSystem.takeBack(lf, to: head.end, path: path)
            throw error
        }
        let appended = Head(seq: head.seq + Int64(entries.count), end: head.end + Int64(log.count))
        var ready = false
        do {
            try beforeIndexing?()
            ready = true
            try FileSystem.writeAt(xf, idx, offset: head.seq * 8, path: indexPath, rollback: false)
        } catch {
            _ = ftruncate(xf, off_t(head.seq * 8))
            WriteCounter.changedFile(indexPath)
            // Relied on once ready (a zone's commit made after its database entry): whole and
            // durable, they are indexed by the next holder of the lock (indexTail).
            if ready && keepsOnceReady { return appended }
            // Durable but not yet seen by anyone: taken back (cut, and the cut synced).
            FileSystem.takeBack(lf, to: head.end, path: path)
            throw error
        }
        return appended
    }

    /// What lies beyond the index's committed end, and the head once it is dealt with.
    struct Tail {
        var head: Head
        var findings: [TailFinding] = []
    }

    /// The index's committed head, then what lies beyond it: index bytes past the last committed
    /// word (a crash while it was written) are cut; log lines past the head are indexed if they
    /// are whole commits (each line's checksum right, `seq` continuing, the last marked as
    /// ending its commit: a crash after the log's sync, before its index words), after syncing
    /// them again (a crash may have come before their sync finished); whatever follows the last
    /// whole commit is cut. Without `repair`, only says what it would do. The caller holds the
    /// log's lock.
    func indexTail(_ dir: Directory, repair: Bool) throws -> Tail {
        var idxSize: Int64 = 0
        var head = Head(seq: 0, end: 0)
        if let (f, st) = try dir.openFileWithStatus(indexName) {
            defer { close(f) }
            idxSize = Int64(st.st_size)
            head = try indexedHead(f, size: idxSize)
        }
        var tail = Tail(head: head)
        if idxSize > head.seq * 8 {
            tail.findings.append(.init(problem: "\(indexNoun) holds \(idxSize - head.seq * 8) bytes after its last committed entry (a commit that never completed)", repairable: true, bytes: idxSize - head.seq * 8))
            if repair { try dir.truncate(indexName, to: head.seq * 8) }
        }
        let size = Int64(dir.status(of: name)?.st_size ?? 0)
        guard size > head.end, let f = try dir.openFile(name) else {
            if size < head.end {
                tail.findings.append(.init(problem: "\(noun) is shorter (\(size) bytes) than its committed entries (\(head.end) bytes): entries are lost", repairable: false))
            }
            return tail
        }
        defer { close(f) }
        // Whole commits first, read a chunk at a time (a stopped machine may leave thousands of
        // entries unindexed, each a whole record): only the words are kept, and the entries when
        // `beforeIndexingTail` asks for them (a database's, each a line).
        var words = [UInt8](), pending = [UInt8]()
        var entries: [JSONValue] = [], pendingEntries: [JSONValue] = []
        var seq = head.seq, committedSeq = head.seq, committedEnd = head.end
        try forEachLine(f, from: head.end) { line, lineEnd in
            guard case .whole(let commits) = AppendLogFraming.verdict(line),
                  let entry = try? JSONParser.parse(Array(line)), entry["seq"]?.int64Value == seq + 1 else { return false }
            seq += 1
            pending += AppendLog.indexWord(end: lineEnd, commits: commits)
            if beforeIndexingTail != nil { pendingEntries.append(entry) }
            if commits {
                words += pending
                pending = []
                entries += pendingEntries
                pendingEntries = []
                committedEnd = lineEnd
                committedSeq = seq
            }
            return true
        }
        if committedSeq > head.seq {
            tail.findings.append(.init(problem: "\(noun) holds \(committedSeq - head.seq) committed entries its index does not cover yet (a crash after their commit)", repairable: true))
            if repair {
                try beforeIndexingTail?(entries)
                try FileSystem.datasync(f, path: path)
                let xf = try dir.openForWriting(indexName)
                defer { close(xf) }
                try FileSystem.writeAt(xf, words, offset: head.seq * 8, path: indexPath, rollback: true)
            }
            head = Head(seq: committedSeq, end: committedEnd)
            if repair { tail.head = head }
        }
        let beyond = size - head.end
        if beyond > 0 {
            tail.findings.append(.init(problem: "\(noun) holds \(beyond) bytes after its last committed entry (a commit that never completed)", repairable: true, bytes: beyond))
            if repair { try dir.truncate(name, to: head.end) }
        }
        return tail
    }

    private var indexNoun: String {
        guard case .index(_, let noun) = commit else { preconditionFailure("\(path) has no index") }
        return noun
    }

    /// What a read found where the index and the log disagree.
    package struct Damage: Error {
        package var seq: Int64
        package var what: String
    }

    /// Streams the committed entries with sequence number > `after` (up to `through`, default
    /// the head), oldest first: each one's number and bytes (without its newline); `body`
    /// returns false to stop. Entries before `emptyBefore` may be empty slots (a word equal to
    /// the one before it: an entry compaction dropped), and are skipped; anywhere else an empty
    /// slot is `Damage`, and so is a word that points past the log or not at a line's end.
    func forEachIndexed(after: Int64, through: Int64?, emptyBefore: Int64 = 1,
                                _ body: (Int64, ArraySlice<UInt8>) throws -> Bool) throws {
        guard let dir = try Directory.open(directory) else { return }
        let head = try indexedHead(dir)
        let last = min(through ?? head.seq, head.seq)
        guard after < last else { return }
        guard let idx = try dir.openFile(indexName), let log = try dir.openFile(name) else {
            throw Damage(seq: after + 1, what: "a history file is missing")
        }
        defer { close(idx); close(log) }
        var start: Int64 = 0
        if after > 0 {
            guard let w = try readIndex(idx, from: after - 1, count: 1).first else { throw Damage(seq: after, what: "index entry missing") }
            start = Int64(w & ~AppendLog.commitBit)
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
                let end = Int64(w & ~AppendLog.commitBit)
                if end == at && seq < emptyBefore { continue }
                guard end > at else { throw Damage(seq: seq, what: "index entries are out of order") }
                while at + Int64(buffer.count - used) < end {
                    if used > 0 { buffer.removeFirst(used); used = 0 }
                    let want = max(Int(end - at) - buffer.count, 65536)
                    var chunk = [UInt8](repeating: 0, count: want)
                    let n = chunk.withUnsafeMutableBytes { pread(log, $0.baseAddress, want, off_t(at) + off_t(buffer.count)) }
                    if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", path) }
                    if n == 0 { throw Damage(seq: seq, what: "the log is shorter than its index says") }
                    buffer.append(contentsOf: chunk[0..<n])
                }
                let lineEnd = used + Int(end - at)
                guard buffer[lineEnd - 1] == 0x0A else { throw Damage(seq: seq, what: "the log does not hold the entry its index points to") }
                let entry = buffer[used..<lineEnd - 1]
                used = lineEnd
                at = end
                if try !body(seq, entry) { return }
            }
        }
    }

    /// The points around the commit holding entry `seq`: the last entry of the commit before
    /// and its own last entry. An entry past the head, or a log without an index, counts as a
    /// commit of its own.
    package func commitBounds(of seq: Int64) throws -> (before: Int64, after: Int64) {
        guard seq >= 1, let dir = try Directory.open(directory) else { return (max(seq - 1, 0), seq) }
        let head = try indexedHead(dir).seq
        guard seq <= head, let f = try dir.openFile(indexName) else { return (seq - 1, seq) }
        defer { close(f) }
        // Entry k's word is at index k - 1; an entry whose word carries the bit ends its commit.
        var before: Int64 = 0
        var hi = seq - 1
        search: while hi > 0 {
            let lo = max(1, hi - 63)
            let words = try readIndex(f, from: lo - 1, count: hi - lo + 1)
            for i in stride(from: words.count - 1, through: 0, by: -1) where words[i] & AppendLog.commitBit != 0 {
                before = lo + Int64(i)
                break search
            }
            hi = lo - 1
        }
        var after = head
        var from = seq
        search: while from <= head {
            let count = min(64, head - from + 1)
            let words = try readIndex(f, from: from - 1, count: count)
            if words.isEmpty { break }
            for (i, w) in words.enumerated() where w & AppendLog.commitBit != 0 {
                after = from + Int64(i)
                break search
            }
            from += Int64(words.count)
        }
        return (before, after)
    }
}
