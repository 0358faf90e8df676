import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rebuilding an indexed log's index from the log. A commit syncs the log only (the index words
/// are written after it, unsynced), so a machine that stops can lose index words the disk had
/// not been given yet — at the end, which the next writer restores (`indexTail`), or, written
/// back out of order, in the middle: a word of zeros among good ones. Readers then find an
/// entry where its word says none ends, and report damage; `ck fsck` rebuilds the index here.
extension AppendLog {
    /// The index the log implies: per entry its end, the commit bit where its line is marked as
    /// ending a commit. Lines written before checksums (no mark) keep the bit their old word
    /// had, if it points where they end, and are their own commit otherwise. Entries a
    /// compaction dropped (a jump in `seq`) are empty slots, as compaction writes them. Nil when
    /// the log itself is damaged: a line that is torn, not JSON, or out of sequence before its end.
    func indexFromLog(_ dir: Directory) throws -> [UInt8]? {
        guard let f = try dir.openFile(name) else { return [] }
        defer { close(f) }
        let oldIndex = try dir.openFile(indexNameForRebuild)
        defer { if let x = oldIndex { close(x) } }
        var words = [UInt8]()
        var seq: Int64 = 0
        var lastEnd: Int64 = 0
        // Set at the first line that is not a whole entry in sequence: from there on only a
        // commit's torn tail may follow; a whole commit line after it is damage.
        var brokenAt: Int64?
        var damaged = false
        try forEachRawLine(f) { line, lineEnd in
            if brokenAt != nil {
                if case .whole(true) = AppendLogFraming.verdict(line) { damaged = true; return false }
                return true
            }
            var commits: Bool
            switch AppendLogFraming.verdict(line) {
            case .torn: brokenAt = lastEnd; return true
            case .whole(let c): commits = c
            case .unframed: commits = true
            }
            guard let entry = try? JSONParser.parse(Array(line)), let s = entry["seq"]?.int64Value, s > seq else {
                brokenAt = lastEnd
                return true
            }
            if case .unframed = AppendLogFraming.verdict(line), let x = oldIndex,
               let w = try readIndex(x, from: s - 1, count: 1).first, Int64(w & ~AppendLog.commitBit) == lineEnd {
                commits = w & AppendLog.commitBit != 0
            }
            while seq < s - 1 {
                words += AppendLog.indexWord(end: lastEnd, commits: false)
                seq += 1
            }
            words += AppendLog.indexWord(end: lineEnd, commits: commits)
            seq = s
            lastEnd = lineEnd
            return true
        }
        guard !damaged else { return nil }
        // What follows the last whole line (a torn tail) is no entry; whole lines of an
        // unfinished commit are not either.
        while words.count >= 8, words[words.count - 8] & 0x80 == 0 { words.removeLast(8) }
        return words
    }

    private var indexNameForRebuild: String {
        guard case .index(let name, _) = commit else { preconditionFailure("\(path) has no index") }
        return name
    }

    /// Replaces the index with the one the log implies, and cuts the log after the last commit
    /// it holds whole. Returns false (and changes nothing) when the log is damaged itself. The
    /// caller holds the log's lock.
    func rebuildIndex() throws -> Bool {
        guard let dir = try Directory.open(directory), let words = try indexFromLog(dir) else { return false }
        var end: Int64 = 0
        if words.count >= 8 {
            end = Int64(words[(words.count - 8)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & ~AppendLog.commitBit)
        }
        try dir.write(indexNameForRebuild, words)
        if Int64(dir.status(of: name)?.st_size ?? 0) > end { try dir.truncate(name, to: end) }
        return true
    }

    /// Each line of the log (without its newline) and the offset after it, from the start;
    /// bytes after the last newline are not passed.
    private func forEachRawLine(_ f: Int32, _ body: (ArraySlice<UInt8>, Int64) throws -> Bool) throws {
        var buffer = [UInt8]()
        var at: Int64 = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(f, $0.baseAddress, $0.count, off_t(at) + off_t(buffer.count)) }
            if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", path) }
            if n == 0 { return }
            buffer += chunk[0..<n]
            var start = 0
            while let nl = buffer[start...].firstIndex(of: 0x0A) {
                if try !body(buffer[start..<nl], at + Int64(nl) + 1) { return }
                start = nl + 1
            }
            buffer.removeFirst(start)
            at += Int64(start)
        }
    }
}
