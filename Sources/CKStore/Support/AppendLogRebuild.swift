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
    /// The index the log implies for what the index says is committed — every entry up to its
    /// head (the last word carrying the commit bit, which was written after its lines were
    /// synced): per entry its end, the commit bit where the line is marked as ending a commit or
    /// the old word, pointing where the line ends, carried the bit (a compaction drops marked
    /// lines but keeps the bits). Lines written before checksums keep their old word's bit, and
    /// are their own commit where that word is lost. Entries a compaction dropped are empty
    /// slots (a word equal to the one before), at a jump in `seq` and up to the old head. Nil
    /// when the log does not hold those entries whole and in order: then it is damaged itself,
    /// and nothing acknowledged may be cut to make an index. What lies past the head is left to
    /// `indexTail`.
    func indexFromLog(_ dir: Directory) throws -> [UInt8]? {
        let old = try indexedHead(dir)
        guard let f = try dir.openFile(name) else { return old.seq == 0 ? [] : nil }
        defer { close(f) }
        let oldIndex = try dir.openFile(indexName)
        defer { if let x = oldIndex { close(x) } }
        var words = [UInt8]()
        var seq: Int64 = 0
        var lastEnd: Int64 = 0
        var damaged = false
        if old.end > 0 {
            try forEachLine(f, from: 0, to: old.end) { line, lineEnd in
                let verdict = AppendLogFraming.verdict(line)
                guard lineEnd <= old.end, verdict != .torn, let entry = try? JSONParser.parse(Array(line)),
                      let s = entry["seq"]?.int64Value, s > seq, s <= old.seq else {
                    damaged = true
                    return false
                }
                var oldWord: UInt64?
                if let x = oldIndex, let w = try readIndex(x, from: s - 1, count: 1).first, Int64(w & ~AppendLog.commitBit) == lineEnd { oldWord = w }
                let commits: Bool
                switch verdict {
                case .whole(let marked): commits = marked || (oldWord.map { $0 & AppendLog.commitBit != 0 } ?? false)
                default: commits = oldWord.map { $0 & AppendLog.commitBit != 0 } ?? true
                }
                while seq < s - 1 {
                    words += try emptySlot(seq + 1, end: lastEnd, oldIndex)
                    seq += 1
                }
                words += AppendLog.indexWord(end: lineEnd, commits: commits)
                seq = s
                lastEnd = lineEnd
                return lineEnd < old.end
            }
        }
        guard !damaged, lastEnd == old.end else { return nil }
        while seq < old.seq {
            words += try emptySlot(seq + 1, end: lastEnd, oldIndex)
            seq += 1
        }
        if !words.isEmpty { words[words.count - 8] |= 0x80 }
        return words
    }

    /// The word of entry `seq`, an empty slot ending where the entry before it does: with the
    /// commit bit its old word carried, if that word is this slot's.
    private func emptySlot(_ seq: Int64, end: Int64, _ oldIndex: Int32?) throws -> [UInt8] {
        let w = try oldIndex.flatMap { try readIndex($0, from: seq - 1, count: 1).first }
        return AppendLog.indexWord(end: end, commits: w.map { Int64($0 & ~AppendLog.commitBit) == end && $0 & AppendLog.commitBit != 0 } ?? false)
    }

    /// Replaces the index with `words` (what `indexFromLog` made), then deals with what lies past
    /// its head (`indexTail`). The caller holds the log's lock.
    func rebuildIndex(_ words: [UInt8], in dir: Directory) throws {
        try dir.write(indexName, words)
        // Past the head: whole commits indexed, the rest cut, as after any crash.
        _ = try indexTail(dir, repair: true)
    }
}
