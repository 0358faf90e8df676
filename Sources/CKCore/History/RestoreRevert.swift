/// `ck restore`, `ck revert` and `ck gc`: writing history back, and letting it age.
///
/// Restore and revert never rewrite history: they write the old versions back as new changes,
/// through `modify` like any client's save, so a client following `zone changes` sees ordinary
/// updates and every token stays valid. Each write is conditional on the record's current
/// change tag (`replace`/`update`/`delete` with the tag read when the plan was made), so a
/// change made meanwhile by someone else is a CONFLICT, never overwritten.
extension Database {
    /// What restoring a zone (or some of its records) to point `seq` changes: for each record
    /// that differs, its current version (`before`) and the version at `seq` (`after`).
    public func restorePlan(zone name: String, to seq: Int64, recordNames: [String]? = nil) throws -> [RecordDiff] {
        let z = try zone(name)
        let snap = try z.snapshot()
        // Shares are made and ended by share operations (ck share), not written back as records.
        guard let names = recordNames else { return try z.diff(from: snap.head, to: seq).filter { !$0.isShare } }
        var seen = Set<NameKey>()
        return try names.filter { seen.insert(NameKey($0)).inserted }.compactMap { n in
            try Names.validateRecordName(n)
            let d = RecordDiff(recordName: n, before: try snap.record(named: n), after: try z.version(of: n, at: seq, in: snap)?.record)
            return d.isNoChange ? nil : d
        }
    }

    /// What reverting change `seq` (undoing it alone) changes: the record's current version
    /// and what it becomes. CONFLICT when a later change touched what it changed.
    public func revertPlan(zone name: String, change seq: Int64) throws -> RecordDiff {
        let z = try zone(name)
        guard let c = try z.change(seq) else {
            throw CloudKitError(.badRequest, "zone '\(Names.describe(name))' has no change \(seq) to revert (a point reached by a token, tag or time must be one change of the zone)", zoneID: z.zoneID)
        }
        let snap = try z.snapshot()
        let current = try snap.record(named: c.recordName)
        var replaced: Record?
        if let p = c.prev {
            guard let old = try z.change(p) else { throw HistoryCompaction.compacted(z.directory, first: try z.history.retainedFrom()) }
            replaced = old.record
        }
        let who = "record '\(Names.describe(c.recordName))'"
        func conflict(_ why: String) -> CloudKitError {
            CloudKitError(.conflict, "cannot revert change \(seq): \(who) \(why); use 'ck restore' to write back a whole version", recordName: c.recordName, zoneID: z.zoneID)
        }
        switch (replaced, c.record) {
        case (nil, let made?):
            // A creation: undone by deleting the record, if it is still as it was made.
            guard let cur = current else { return RecordDiff(recordName: c.recordName, before: nil, after: nil) }
            guard cur.fields == made.fields && cur.recordType == made.recordType else { throw conflict("changed since it was created") }
            return RecordDiff(recordName: c.recordName, before: cur, after: nil)
        case (let old?, nil):
            // A deletion: undone by making the record again.
            if current != nil { throw conflict("exists again") }
            return RecordDiff(recordName: c.recordName, before: nil, after: old)
        case (let old?, let new?):
            guard var cur = current else { throw conflict("was deleted since") }
            for f in RecordDiff.fieldChanges(old, new) {
                guard cur.fields[f.name] == f.new else { throw conflict("has field '\(f.name)' changed again since") }
                cur.fields[f.name] = f.old
            }
            return RecordDiff(recordName: c.recordName, before: current, after: cur)
        case (nil, nil):
            return RecordDiff(recordName: c.recordName, before: nil, after: nil)
        }
    }

    /// Writes a plan (from `restorePlan` or `revertPlan`) as new changes, up to 400 a request.
    public func apply(_ plan: [RecordDiff], zone name: String) throws -> [OperationResult] {
        if let d = plan.first(where: { $0.isShare && !$0.isNoChange }) {
            throw CloudKitError(.badRequest, "'\(Names.describe(d.recordName))' is a share record: shares are not restored or reverted as records; make one again with 'ck share create' (or end it with 'ck share delete')", recordName: d.recordName)
        }
        let ops: [RecordOperation] = plan.filter { !$0.isNoChange }.map { d in
            guard let target = d.after else {
                return RecordOperation(type: .delete, recordName: d.recordName, recordChangeTag: d.before?.recordChangeTag)
            }
            var fields: [String: RecordField?] = [:]
            for (k, v) in target.fields { fields[k] = .some(v) }
            if let cur = d.before {
                return RecordOperation(type: .replace, recordName: d.recordName, recordType: target.recordType, recordChangeTag: cur.recordChangeTag,
                                       fields: fields, parent: target.parent)
            }
            return RecordOperation(type: .create, recordName: d.recordName, recordType: target.recordType, fields: fields, parent: target.parent)
        }
        var results: [OperationResult] = []
        var start = 0
        while start < ops.count {
            let chunk = Array(ops[start..<min(start + Limits.operationsPerBatch, ops.count)])
            start += chunk.count
            results += try modify(zone: name, operations: chunk)
        }
        return results
    }

    /// `ck gc`: compacts a zone's history so that every change from `retainFrom(zone, head)` on
    /// is kept (see HistoryCompaction), under the zone's lock.
    public func compactHistory(zone name: String, retainFrom: (ZoneStore, Int64) throws -> Int64) throws -> (ZoneStore, HistoryCompaction.Result) {
        try requireWrite()
        let found = try zone(name)
        if found.incarnation.isEmpty {
            return (found, HistoryCompaction.Result(retainedFrom: 1, head: 0, dropped: 0, keptBase: 0, logBytesBefore: 0, logBytesAfter: 0))
        }
        let env = try environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try lockZone(name)
        defer { lock.unlock() }
        let z = try zone(name)
        try finishInterruptedCommit(z)
        // A restart must never need an entry compaction drops to redo the files.
        try makeRecordFilesDurable(z)
        let first = try retainFrom(z, try z.history.head())
        return (z, try HistoryCompaction.compact(z.history, retainFrom: first))
    }
}

extension RecordDiff {
    /// A diff of a share record (`cloudkit.share`), before or after.
    var isShare: Bool { before?.recordType == ShareInfo.recordType || after?.recordType == ShareInfo.recordType }
}
