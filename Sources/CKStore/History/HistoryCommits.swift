import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commits of a history: the entries one write appended together (its index words, the
/// last carrying the commit bit). Nobody ever sees a zone between two entries of one commit —
/// a share made with its root, a record deleted with what its DELETE_SELF references cascade
/// to — so what a change shows is judged at the commit's edges (PermissionGate's history gate).
extension ChangeHistory {
    /// The points around the commit holding entry `seq`: the state just before it (the last
    /// entry of the commit before) and just after it (its own last entry). An entry past the
    /// head, or a history without an index, counts as a commit of its own.
    package func commitBounds(of seq: Int64) throws -> (before: Int64, after: Int64) {
        guard seq >= 1, let dir = try Directory.open(directory) else { return (max(seq - 1, 0), seq) }
        let head = try committedHead(dir).seq
        guard seq <= head, let f = try dir.openFile(ChangeHistory.indexName) else { return (seq - 1, seq) }
        defer { close(f) }
        // Entry k's word is at index k - 1; an entry whose word carries the bit ends its commit.
        var before: Int64 = 0
        var hi = seq - 1
        search: while hi > 0 {
            let lo = max(1, hi - 63)
            let words = try readIndex(f, from: lo - 1, count: hi - lo + 1)
            for i in stride(from: words.count - 1, through: 0, by: -1) where words[i] & ChangeHistory.commitBit != 0 {
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
            for (i, w) in words.enumerated() where w & ChangeHistory.commitBit != 0 {
                after = from + Int64(i)
                break search
            }
            from += Int64(words.count)
        }
        return (before, after)
    }
}
