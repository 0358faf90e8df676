import CKModel

/// "The latest change per key after a point, one bounded page at a time": the one query both
/// change feeds are built from — `changes/zone` keyed by record name, `changes/database` by
/// zone name. CloudKit keeps no old versions, so a feed returns each key once, as its latest
/// change, on the page where that change lies; a change superseded by a later one is skipped
/// (the page's end may move past it) and its key comes on the later change's page — which is
/// how a record changed again while a client pages moves to a later page, never skipped.
///
/// A page reads the history after its start in windows. A window holds the entries up to, not
/// including, the first entry of a key beyond the page's room; each key's last entry in it is
/// a candidate (its earlier ones are superseded within the window). A window that reaches the
/// head holds each key's latest change as of the head. Of a window that stops short, the caller
/// says which candidates changed again later (`laterChanges`: a zone asks its record files and
/// tombstones, a database its history). Candidates that did are dropped and the next window
/// fills the room, until the page is full or reaches the head.
///
/// Cost: the entries the windows read — every entry is read by one page, but the one a window
/// stops at, which the next window reads again — plus what `laterChanges` costs.
struct LatestChangesPage<Entry> {
    /// Each key's latest change, in history order; at most the page's limit.
    package var entries: [Entry]
    /// Where the page ends (its token's point): every entry up to here is returned or superseded.
    package var end: Int64
    /// Whether changes lie after `end`: entries up to the head, or a later change (a concurrent
    /// commit past the head) that superseded a candidate.
    package var moreComing: Bool
}

extension ChangeHistory {
    /// One page after `start`, up to `head`, of at most `limit` keys (see LatestChangesPage).
    /// `laterChanges(candidates, windowEnd)` gives, for each candidate (each the last entry of
    /// its key up to `windowEnd`), the seq of a later change of its key, or nil when none.
    func latestChanges<E: HistoryLine>(_: E.Type, after start: Int64, through head: Int64, limit: Int, skipCompacted: Bool = false,
                                       laterChanges: (_ candidates: [E], _ windowEnd: Int64) throws -> [Int64?]) throws -> LatestChangesPage<E> {
        var page: [E] = []
        var end = start
        var newest = head
        while page.count < limit && end < head {
            let room = limit - page.count
            var last: [NameKey: E] = [:]
            var windowEnd = end
            var stopped = false
            try forEach(E.self, after: end, through: head, skipCompacted: skipCompacted) { e in
                if last[e.key] == nil && last.count == room { stopped = true; return false }
                last[e.key] = e
                windowEnd = e.seq
                return true
            }
            if !stopped { windowEnd = head }
            var candidates = last.values.sorted { $0.seq < $1.seq }
            if windowEnd < head && !candidates.isEmpty {
                let later = try laterChanges(candidates, windowEnd)
                newest = max(newest, later.compactMap { $0 }.max() ?? newest)
                candidates = zip(candidates, later).compactMap { $1 == nil ? $0 : nil }
            }
            page += candidates
            end = windowEnd
        }
        return LatestChangesPage(entries: page, end: end, moreComing: end < newest)
    }
}
