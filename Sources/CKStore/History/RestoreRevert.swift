import CKModel

/// `ck restore`, `ck revert` and `ck gc`: writing history back, and letting it age.
///
/// Restore and revert never rewrite history: they write the old versions back as new changes,
/// through `modify` like any client's save, so a client following `zone changes` sees ordinary
/// updates and every token stays valid. Each write is conditional on the record's current
/// change tag (`replace`/`update`/`delete` with the tag read when the plan was made), so a
/// change made meanwhile by someone else is a CONFLICT, never overwritten.
extension RecordDiff {
    /// What reverting change `c` (undoing it alone) changes, given the version it replaced,
    /// the one it wrote and the record now, as the reverting user sees them: the record's
    /// current version and what it becomes. CONFLICT when a later change touched what it changed.
    package static func revert(_ c: HistoryChange, replaced: Record?, wrote: Record?, current: Record?, zoneID: ZoneID) throws -> RecordDiff {
        let who = "record '\(Names.describe(c.recordName))'"
        func conflict(_ why: String) -> CloudKitError {
            CloudKitError(.conflict, "cannot revert change \(c.seq): \(who) \(why); write back a whole version instead", recordName: c.recordName, zoneID: zoneID)
                .with(.restoreWholeVersion(recordName: c.recordName))
        }
        switch (replaced, wrote) {
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
}

/// Writing history back into a zone (a restore's or a revert's plan) and letting it age (gc).
package struct HistoryWriter {
    let db: Database

    package init(_ db: Database) { self.db = db }

    /// Writes a plan (of a restore or a revert) as new changes, up to 200 a request.
    package func apply(_ plan: [RecordDiff], zone name: String) throws -> [OperationResult] {
        if let d = plan.first(where: { $0.isShare && !$0.isNoChange }) {
            throw CloudKitError(.badRequest, "'\(Names.describe(d.recordName))' is a share record: shares are not restored or reverted as records", recordName: d.recordName)
                .with(.shareAgain(recordName: d.recordName))
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
            results += try db.modify(zone: name, operations: chunk)
        }
        return results
    }

    /// `ck gc`: compacts a zone's history so that every change from `retainFrom(zone, head)` on
    /// is kept (see HistoryCompaction), under the zone's lock.
    package func compact(zone name: String, retainFrom: (ZoneStore, Int64) throws -> Int64) throws -> (ZoneStore, HistoryCompaction.Result) {
        try db.requireWrite()
        let found = try db.zone(name)
        if found.incarnation.isEmpty {
            return (found, HistoryCompaction.Result(retainedFrom: 1, head: 0, dropped: 0, keptBase: 0, logBytesBefore: 0, logBytesAfter: 0))
        }
        let env = try db.environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try db.lockZone(name)
        defer { lock.unlock() }
        let z = try db.zone(name)
        try db.finishInterruptedCommit(z)
        // A restart must never need an entry compaction drops to redo the files.
        try db.makeRecordFilesDurable(z)
        let first = try retainFrom(z, try z.history.head())
        return (z, try HistoryCompaction.compact(z.history, retainFrom: first))
    }
}

extension RecordDiff {
    /// A diff of a share record (`cloudkit.share`), before or after.
    package var isShare: Bool { before?.recordType == ShareInfo.recordType || after?.recordType == ShareInfo.recordType }
}
