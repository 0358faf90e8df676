import CKModel

extension ZoneSnapshot {
    /// For each entry — the last of its record up to `windowEnd` (≤ the snapshot's head) — the
    /// seq of a later change of its record, or nil when it is the record's latest change:
    /// `laterChanges` of the zone feed's LatestChanges query. One file read per entry, whatever
    /// the zone's size:
    /// - a record changed after the applied cursor: the snapshot read its last change from the
    ///   history (its files may not show it yet);
    /// - a save: the record file's change tag is the seq of the entry that wrote it;
    /// - a deletion: a record file means the record was made again; else its tombstone names
    ///   its name's latest deletion. Only a deletion no tombstone decides (one a ck that kept
    ///   none made, a damaged file) is looked for in the history, from `windowEnd` on.
    /// A file may already show a commit after the head: that is a later change too, and the
    /// page then says moreComing, so the client fetches it.
    func laterChanges(of entries: [HistoryEntry], after windowEnd: Int64) throws -> [Int64?] {
        var out: [Int64?] = []
        var undecided: [NameKey: Int] = [:]
        for (i, e) in entries.enumerated() {
            if let c = unappliedChange(of: e.key) {
                out.append(c == e.seq ? nil : c)
                continue
            }
            let file = try zone.readRecord(named: e.recordName)
            let fileSeq = file.flatMap { ChangeTag.seq(ofTag: $0.recordChangeTag) }
            switch (e.op, file) {
            case (.save, .some):
                // A file behind its history, or whose tag is no seq, is damage fsck restores
                // from the history: the entry stands.
                out.append(fileSeq.flatMap { $0 > e.seq ? $0 : nil })
            case (.save, nil):
                out.append(try deletion(after: e))
            case (.delete, .some):
                out.append(try fileSeq ?? zone.history.head())
            case (.delete, nil):
                if let d = zone.latestDeletion(of: e.recordName), d >= e.seq {
                    out.append(d == e.seq ? nil : d)
                } else {
                    out.append(nil)
                    undecided[e.key] = i
                }
            }
        }
        if !undecided.isEmpty {
            try zone.history.forEachEntry(after: windowEnd, through: head) { e in
                if let i = undecided.removeValue(forKey: e.key) { out[i] = e.seq }
                return !undecided.isEmpty
            }
        }
        return out
    }

    /// The deletion that removed a saved record's file since: its tombstone, or (none to trust)
    /// the head, which is at or past it.
    private func deletion(after e: HistoryEntry) throws -> Int64 {
        if let d = zone.latestDeletion(of: e.recordName), d > e.seq { return d }
        return try zone.history.head()
    }
}
