import CKCrypto
import CKModel

/// `records/modify`: applying record operations to a zone and committing them.
///
/// A commit, under the environment's lock (shared), the zone's lock and — for a zone with a
/// change feed — the database's lock:
/// 1. finishes what an interrupted earlier commit left (see `finishInterruptedCommit`);
/// 2. runs the operations against the zone as it is, in memory;
/// 3. prepares everything it will write: new asset files, and each changed record file,
///    reference-index file and tombstone as a temporary file — a full disk fails here and
///    changes nothing;
/// 4. commits: appends the entries to the zone's history (the point of no return) and, for a
///    custom zone, the database history's entry for it, under an intent that lets the next
///    lock holder finish that entry if this process dies in between;
/// 5. publishes the prepared files (renames), syncs them, delivers notifications, and moves
///    the zone's applied cursor. A crash anywhere in 5 is finished by the next writer of the
///    zone, or by `ck fsck`, from the history, which holds every record whole.
extension Database {
    /// Applies a `records/modify` request to one zone: operations in order, one result each.
    /// In a custom zone an atomic request applies all or nothing (ATOMIC_ERROR for the others).
    /// `bulk`: the load this batch belongs to (`ck import`), which may know the zone (BulkLoad).
    public func modify(zone name: String, operations: [RecordOperation], atomic: Bool = true,
                       assets pending: [String: [UInt8]] = [:], bulk: BulkLoad? = nil) throws -> [OperationResult] {
        try Limits.checkItems(operations.count)
        let user = try requireWrite()
        definedSchema = Schema()
        // The shared database writes into the owner's zone, as the participant (Sharing/).
        if let owner = try sharedOwnerView(zone: name) {
            owner.webAssets = webAssets
            defer { definedSchema = owner.definedSchema }
            return try owner.modify(zone: name, operations: operations, atomic: atomic, assets: pending)
        }
        var z = try zone(name)
        let atomically = atomic && !z.zoneID.isDefault
        var roles = try callerRoles()
        var stored = try schema()
        var schemaContext = SchemaContext(schema: stored, environment: address.environment)
        // Decided once per operation, however many times the batch is run below.
        let injected = try operations.map { op in try op.recordName.flatMap { try injectedFault(.recordsModify, zone: z, recordName: $0) } }

        var knownAbsent: ((NameKey) -> Bool)?
        /// Runs the operations into a new transaction, or into a child of a group commit's.
        func run(_ z: ZoneStore, nextSeq: Int64, in group: Transaction? = nil) throws -> (Transaction, [OperationResult]) {
            schemaContext = SchemaContext(schema: stored, environment: address.environment)
            var writer = RecordWriter(zone: z, scope: scope, user: user, deviceID: caller.deviceID, now: clock.now(), assets: assets,
                                      schema: schemaContext, roles: roles)
            writer.access = sharing.access
            writer.webAssets = webAssets
            let tx = group?.child() ?? Transaction(zone: z, nextSeq: nextSeq, knownAbsent: knownAbsent)
            tx.assets = pending
            if !z.incarnation.isEmpty { (group ?? tx).readAhead(operations.compactMap(\.recordName)) }
            var results: [OperationResult] = []
            var failedAt: Int?
            for (i, op) in operations.enumerated() {
                if failedAt != nil { results.append(.failed(CloudKitError(.atomicError, "atomic batch failed", recordName: op.recordName))); continue }
                if let e = injected[i] {
                    results.append(.failed(e))
                    if atomically { failedAt = i }
                    continue
                }
                let child = tx.child()
                do {
                    results.append(try writer.apply(op, in: child))
                    tx.merge(child)
                } catch let e as CloudKitError {
                    var err = e
                    if err.recordName == nil { err.recordName = op.recordName }
                    results.append(.failed(err))
                    if atomically { failedAt = i }
                }
            }
            if let f = failedAt {
                for i in 0..<f { results[i] = .failed(CloudKitError(.atomicError, "atomic batch failed", recordName: operations[i].recordName ?? recordName(of: results[i]))) }
                // The batch is dropped: the record an error carries is the one the server holds,
                // not what the batch's earlier operations made of it (a share's creation changes
                // its root).
                if f > 0, case .failed(var e) = results[f], let held = e.serverRecord,
                   let found = try group?.record(held.recordName) ?? z.recordForWrite(named: held.recordName), found != held {
                    e.serverRecord = found
                    if e.code == .conflict {
                        e.reason = "record '\(Names.describe(held.recordName))' was changed by an earlier operation of this request (its tag became \(held.recordChangeTag)); the server holds tag \(found.recordChangeTag): send this operation in a request of its own, with that tag"
                        e.nextStep = .retryWithTag(recordName: found.recordName, tag: found.recordChangeTag)
                    } else if let step = e.nextStep, case .updateInstead = step {
                        e.nextStep = .updateInstead(recordName: found.recordName, tag: found.recordChangeTag)
                    }
                    results[f] = .failed(e)
                }
                tx.entries = []
                tx.changes = []
            }
            return (tx, results)
        }

        if z.incarnation.isEmpty {
            // The default zone before its first record: find out first whether anything would
            // be written, so a request that fails leaves the data directory untouched.
            let (dry, results) = try run(z, nextSeq: 1)
            if dry.entries.isEmpty { return results }
        }
        if bulk == nil, !z.incarnation.isEmpty {
            // Under the group's locks, as one request of it: the schema and roles as they are
            // now, the operations into a child of the group's transaction.
            let job = GroupCommit.Job { [self] groupZone, group in
                forgetCachedSchema()
                stored = try schema()
                roles = try callerRoles()
                let (tx, results) = try run(groupZone, nextSeq: 0, in: group)
                // Types and fields defined just in time go into the schema before the commit.
                if !tx.entries.isEmpty, schemaContext.changed {
                    try schemaAdmin.store(address.environment).merge(schemaContext.additions)
                    definedSchema = schemaContext.additions
                }
                return (tx, results)
            }
            do {
                return try GroupCommit.shared.run(job, key: z.directory) { jobs in commitGroup(zone: name, jobs) }
            } catch is ZoneToMake {
                // The zone is gone from the disk since (a purge): made again below, alone.
            }
        }
        let env = try environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try lockZone(name)
        defer { lock.unlock() }
        // The zone, schema and roles as they are now that they are locked: a zone may have been
        // deleted (or made), a schema reset, meanwhile.
        forgetCachedSchema()
        stored = try schema()
        roles = try callerRoles()
        z = try zone(name)
        var madeZone = false
        if z.incarnation.isEmpty {
            guard let made = try ZoneStore.make(directory: z.directory, zoneID: z.zoneID, incarnation: Hex.string((0..<8).map { _ in UInt8.random(in: 0...255) }),
                                                timestamp: clock.now()) else {
                throw CloudKitError.internalError("zone '\(name)' appeared while its lock was held")
            }
            z = made
            madeZone = true
        }
        do {
            try finishInterruptedCommit(z)
            knownAbsent = try bulk.flatMap { $0.zoneName.sameBytes(name) ? try $0.knownAbsent(in: z) : nil }
            let (tx, results) = try run(z, nextSeq: try z.history.head() + 1)
            if tx.entries.isEmpty {
                if madeZone { try? FileSystem.removeTree(z.directory) }
                return results
            }
            // Types and fields defined just in time go into the schema first, so no record is
            // ever stored under a schema that lacks its fields.
            if schemaContext.changed {
                try schemaAdmin.store(address.environment).merge(schemaContext.additions)
                definedSchema = schemaContext.additions
            }
            try sharingWillCommit(tx, in: z)
            try commit(tx, in: z, syncsInBackground: bulk != nil)
            if let bulk, bulk.knowsZone, let last = tx.entries.last?.seq {
                // The schema as the commit left it: the one read under the lock above, read
                // again only when the batch defined types or fields.
                if schemaContext.changed { forgetCachedSchema() }
                bulk.committed(tx, through: last, schema: try? schema(), index: ZoneIndex(zone: z))
            }
            return results
        } catch {
            if madeZone, (try? z.history.head()) == 0 { try? FileSystem.removeTree(z.directory) }
            throw error
        }
    }

    /// Commits a group of requests to zone `name` (GroupCommit) as one: each runs in turn
    /// into the group's transaction, which is committed once. A request whose operations all
    /// failed keeps its results; if the commit fails, every request that wrote gets its error.
    private func commitGroup(zone name: String, _ jobs: [GroupCommit.Job]) -> [Result<[OperationResult], Error>] {
        do {
            let env = try environmentGuard.lockForWriting()
            defer { env.unlock() }
            let lock = try lockZone(name)
            defer { lock.unlock() }
            let z = try zone(name)
            guard !z.incarnation.isEmpty else { return jobs.map { _ in .failure(ZoneToMake()) } }
            try finishInterruptedCommit(z)
            let group = Transaction(zone: z, nextSeq: try z.history.head() + 1)
            var outcomes: [Result<[OperationResult], Error>] = []
            var wrote: [Bool] = []
            for job in jobs {
                do {
                    let (tx, results) = try job.apply(z, group)
                    if !tx.entries.isEmpty { group.merge(tx) }
                    outcomes.append(.success(results))
                    wrote.append(!tx.entries.isEmpty)
                } catch {
                    outcomes.append(.failure(error))
                    wrote.append(false)
                }
            }
            guard !group.entries.isEmpty else { return outcomes }
            do {
                try sharingWillCommit(group, in: z)
                try commit(group, in: z)
            } catch {
                return zip(outcomes, wrote).map { o, w in w ? .failure(error) : o }
            }
            return outcomes
        } catch {
            return jobs.map { _ in .failure(error) }
        }
    }

    private func recordName(of r: OperationResult) -> String? {
        switch r {
        case .saved(let rec): return rec.recordName
        case .deleted(let n, _, _): return n
        case .failed(let e): return e.recordName
        }
    }

    /// Commits a transaction (steps 3–5 above). The caller holds the zone's lock.
    /// `syncsInBackground`: a bulk load's commit (ZoneStore.syncFilesIfDue).
    package func commit(_ tx: Transaction, in z: ZoneStore, syncsInBackground: Bool = false) throws {
        guard let last = tx.entries.last?.seq else { return }
        var prepared = PreparedFiles()
        var notSynced: String?
        /// The history append: a commit the disk would not confirm durable is still a commit.
        func append() throws {
            do { try z.history.append(tx.entries) } catch let c as ChangeHistory.CommittedButNotSynced { notSynced = c.reason }
        }
        do {
            // Asset files are content-addressed and may be shared with a concurrent commit of
            // another zone, so a failed commit leaves any it stored (unreferenced, harmless).
            for (sum, bytes) in tx.assets.sorted(by: { $0.key < $1.key }) where !(try assets.contains(checksum: sum)) {
                _ = try assets.put(bytes)
            }
            prepared = try z.prepare(records: tx.records, refs: tx.refs, tombstones: tx.deletions)
            if announces(z.zoneID.zoneName) {
                try withDatabaseLock(holdingZone: z.zoneID.zoneName) {
                    let intent = try newIntent(.change, zoneName: z.zoneID.zoneName, incarnation: z.incarnation, zoneSeq: last)
                    try writeIntent(intent)
                    do { try append() } catch {
                        try? FileSystem.remove(intentFile(intent.zoneName))
                        throw error
                    }
                    // Committed. Should recording it fail, the intent stays and is finished later.
                    if (try? recordInDatabaseHistory(intent)) != nil { try? FileSystem.remove(intentFile(intent.zoneName)) }
                }
            } else {
                try append()
            }
        } catch {
            z.discard(prepared)
            throw error
        }
        // Committed: readers see it (ZoneSnapshot reads what the files do not hold yet from the
        // history). What follows brings the derived files up to date; if it stops part-way, the
        // next writer of the zone, or ck fsck, finishes it.
        if (try? z.publish(prepared)) != nil {
            let durable = z.syncFilesIfDue(through: last, background: syncsInBackground)
            if (try? notifications.deliver(zone: z, changes: tx.changes, through: last)) != nil {
                try? z.setApplied(last, durable: durable)
                maintainIndexes(z, through: last)
            }
        }
        if let why = notSynced {
            throw CloudKitError.internalError("the change was committed (readers see it), but the disk did not confirm it durable: \(why)")
        }
    }

    /// Brings a zone's record files, reference index, tombstones and notifications up to date
    /// with its history, replaying the entries after the applied cursor: what a commit interrupted
    /// after its point of no return left undone. Idempotent. The caller holds the zone's lock.
    @discardableResult
    package func finishInterruptedCommit(_ z: ZoneStore) throws -> Int64 {
        let head = try z.history.head()
        let applied = try z.appliedSeq()
        guard applied < head else { return 0 }
        let replay = try HistoryReplay(zone: z, after: applied, through: head)
        let prepared = try z.prepare(records: replay.transaction.records, refs: replay.transaction.refs, tombstones: replay.transaction.deletions)
        try z.publish(prepared)
        z.syncFiles()
        try notifications.deliver(zone: z, changes: replay.transaction.changes, through: head)
        try z.setApplied(head, durable: head)
        return head - applied
    }

    /// Syncs the record files commits published without syncing (ZoneStore.syncFilesIfDue),
    /// so a restart of the machine redoes none of them. The caller holds the zone's lock and
    /// has finished any interrupted commit.
    package func makeRecordFilesDurable(_ z: ZoneStore) throws {
        let c = try z.appliedCursor()
        guard c.durable < c.seq else { return }
        z.syncFiles()
        try z.setApplied(c.seq, durable: c.seq)
    }
}

/// A group found its zone not on the disk (purged since): its requests make it, one by one.
package struct ZoneToMake: Error {}

/// The history entries of a range turned back into a transaction: the final state of each
/// record changed, the reference-index changes, and each change with its before and after.
package struct HistoryReplay {
    package let transaction: Transaction

    package init(zone z: ZoneStore, after: Int64, through: Int64) throws {
        let tx = Transaction(zone: z, nextSeq: after + 1)
        var versions: [Int64: Record] = [:]
        try z.history.forEachEntry(after: after, through: through) { e in
            var before: Record?
            if let p = e.prev {
                if let v = versions[p] { before = v } else { before = try z.history.entry(p)?.record }
            }
            try tx.reindex(source: e.recordName, old: before, new: e.record)
            if let r = e.record { tx.put(r); versions[e.seq] = r } else { tx.remove(e.recordName) }
            let kind: RecordChange.Kind = e.record == nil ? .deleted : (before == nil ? .created : .updated)
            tx.changes.append(RecordChange(kind: kind, recordName: e.recordName, seq: e.seq, before: before, after: e.record,
                                           userRecordName: e.userRecordName, deviceID: e.deviceID, timestamp: e.timestamp))
            return true
        }
        transaction = tx
    }
}
