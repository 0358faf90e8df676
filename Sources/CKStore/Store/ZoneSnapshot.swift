import CKModel

/// A zone's records as of one point of its history, for readers, who take no lock.
///
/// Record files are derived from the history and renamed into place one by one after a commit;
/// `applied.json` says how far they are done. A reader that read the files alone could see half
/// of a batch — during any publish, and for as long as a crashed writer's commit waits for the
/// zone's next writer. So a snapshot takes the history's committed head `H` and reads:
/// - for records changed after the applied cursor `A` (entries `A+1…H`, normally none), their
///   version from the history itself;
/// - for any other record, its file — unless the file is newer than `H` (a commit after the
///   snapshot was taken, being published), in which case the version as of `H` is found by
///   following `prev` back through the history.
/// The cursor is read before the head, so every file for an entry up to `A` is in place. One
/// window remains for a scan (list, query, export): a record a later commit deletes while the
/// scan runs may be missing from it; a single lookup checks for that too.
package struct ZoneSnapshot {
    package let zone: ZoneStore
    /// The history entry the snapshot stands at.
    package let head: Int64
    /// Records changed in `A+1…H`: their version as of `H` (nil: deleted by then).
    private let recent: [NameKey: Record?]
    /// Records changed in `A+1…H`: their last change then.
    private let recentChange: [NameKey: Int64]

    /// `at`: as of that entry, when it is before the head (a commit's notifications, worked out
    /// after later commits: UnpublishedCommits).
    package init(_ z: ZoneStore, at limit: Int64? = nil) throws {
        zone = z
        let applied = try z.appliedSeq()
        let committed = try z.history.head()
        head = limit.map { min($0, committed) } ?? committed
        var recent: [NameKey: Record?] = [:]
        var recentChange: [NameKey: Int64] = [:]
        if applied < head {
            try z.history.forEachEntry(after: applied, through: head) { e in
                recent[e.key] = .some(e.record)
                recentChange[e.key] = e.seq
                return true
            }
        }
        self.recent = recent
        self.recentChange = recentChange
    }

    /// The last change (as of the snapshot) of a record the files may not show yet: one changed
    /// after the applied cursor. Nil for any other record: its files are up to date with every
    /// change up to the snapshot's head (and may show later ones).
    func unappliedChange(of name: NameKey) -> Int64? { recentChange[name] }

    /// One record as of the snapshot; nil when it does not exist then.
    package func record(named name: String) throws -> Record? {
        try record(named: name, file: file(named: name))
    }

    /// The file half of `record(named:)`: safe to call on several threads at once.
    package func file(named name: String) throws -> Record? {
        recent[NameKey(name)] != nil ? nil : try zone.readRecord(named: name)
    }

    /// The rest of `record(named:)`, given what `file(named:)` read.
    package func record(named name: String, file: Record?) throws -> Record? {
        if let r = recent[NameKey(name)] { return r }
        if let file { return try asOfHead(file) }
        // No file: unless a commit after the snapshot deleted it, there is no such record.
        var deletedLater: Int64?
        try zone.history.forEachEntry(after: head) { e in
            guard e.recordName.sameBytes(name) else { return true }
            deletedLater = e.prev ?? 0
            return false
        }
        guard let p = deletedLater, p > 0 else { return nil }
        return try zone.history.entry(p)?.record
    }

    /// A record read from its file, taken back to the snapshot's point if the file is newer.
    private func asOfHead(_ file: Record?) throws -> Record? {
        guard var r = file, let seq = ChangeTag.seq(ofTag: r.recordChangeTag), seq > head else { return file }
        // A commit after the snapshot: follow `prev` back to the version the snapshot holds.
        var entry = try zone.history.entry(seq)
        while let e = entry, e.seq > head {
            guard let p = e.prev else { return nil }
            entry = try zone.history.entry(p)
        }
        guard let saved = entry?.record else { return nil }
        r = saved
        return r
    }

    /// Every record as of the snapshot, in storage order, then those the files do not hold yet.
    package func forEachRecord(_ body: (Record) throws -> Bool) throws {
        try forEachRecord(prepare: nil) { r, _ in try body(r) }
    }

    /// The same, with `prepare(record)` worked out on the reading threads; it is handed on
    /// (else nil) when the record is its file's version, not an older one the snapshot holds.
    package func forEachRecord(prepare: ((Record) -> String)?, _ body: (Record, String?) throws -> Bool) throws {
        var stop = false
        try zone.forEachRecordFile(prepare: prepare) { file, prepared in
            if recent[NameKey(file.recordName)] != nil { return true }
            guard let r = try asOfHead(file) else { return true }
            let current = ChangeTag.seq(ofTag: file.recordChangeTag).map { $0 <= head } ?? true
            if try !body(r, current ? prepared : nil) { stop = true; return false }
            return true
        }
        if stop { return }
        for k in recent.keys.sorted() {
            guard let r = recent[k] ?? nil else { continue }
            if try !body(r, nil) { return }
        }
    }
}
