import CKCrypto
import CKModel
import Dispatch

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
    /// The operations are applied to a transaction (BatchApplication) and the transaction is
    /// committed (`commit`): alone under the zone's lock, or with other requests of this process
    /// in a group (GroupCommit).
    package func modify(zone name: String, _ batch: ModifyBatch) throws -> ModifyOutcome {
        try Limits.checkItems(batch.operations.count)
        let user = try requireWrite()
        // The shared database writes into the owner's zone, as the participant (Sharing/).
        if let shared { return try shared.ownerDatabase(forZone: name).modify(zone: name, batch) }
        var z = try zone(name)
        let application = try BatchApplication(batch, database: self, zone: z, user: user)
        func outcome(_ results: [OperationResult]) -> ModifyOutcome { ModifyOutcome(results: results, definedSchema: application.defined) }

        if z.incarnation.isEmpty {
            // The default zone before its first record: find out first whether anything would
            // be written, so a request that fails leaves the data directory untouched.
            let (dry, results) = try application.apply(to: z, nextSeq: 1)
            if dry.entries.isEmpty { return outcome(results) }
        }
        if batch.bulk == nil, !z.incarnation.isEmpty {
            // Under the group's locks, as one request of it: the schema and roles as they are
            // now, the operations into a child of the group's transaction.
            let job = GroupCommit.Job { groupZone, group in
                try application.refreshSchema()
                let (tx, results) = try application.apply(to: groupZone, nextSeq: 0, in: group)
                if !tx.entries.isEmpty { try application.defineSchema() }
                return (tx, results)
            }
            do {
                let key = z.directory
                return outcome(try GroupCommit.shared.run(job, key: key) { jobs in commitGroup(zone: name, key: key, jobs) })
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
        try application.refreshSchema()
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
            let head = try finishInterruptedCommitToHead(z).head
            application.knownAbsent = try batch.bulk.flatMap { $0.zoneName.sameBytes(name) ? try $0.knownAbsent(in: z) : nil }
            let (tx, results) = try application.apply(to: z, nextSeq: head + 1)
            if tx.entries.isEmpty {
                if madeZone { try? FileSystem.removeTree(z.directory) }
                return outcome(results)
            }
            try application.defineSchema()
            if scope == .private { try ShareRegistry.noteShares(of: tx, in: z, database: directory) }
            try commit(tx, in: z, syncsInBackground: batch.bulk != nil)
            if let bulk = batch.bulk, bulk.knowsZone, let last = tx.entries.last?.seq {
                // The schema as the commit left it: the one read under the lock above, read
                // again only when the batch defined types or fields.
                if application.definesSchema { forgetCachedSchema() }
                bulk.committed(tx, through: last, schema: try? schema(), index: ZoneIndex(zone: z))
            }
            return outcome(results)
        } catch {
            if madeZone, (try? z.history.head()) == 0 { try? FileSystem.removeTree(z.directory) }
            throw error
        }
    }

    /// `modify` of operations with no options: the results.
    package func modify(zone name: String, operations: [RecordOperation], atomic: Bool = true) throws -> [OperationResult] {
        try modify(zone: name, ModifyBatch(operations, atomic: atomic)).results
    }

    /// Commits a group of requests to zone `name` (GroupCommit) as one: each runs in turn
    /// into the group's transaction, which is committed once. A request whose operations all
    /// failed keeps its results; if the commit fails, every request that wrote gets its error.
    /// The zone's locks and its unpublished commits are kept between groups (UnpublishedCommits):
    /// where groups publish after the answer, the requests are answered once the commit is
    /// durable and its files are published while the next group commits.
    private func commitGroup(zone name: String, key: String, _ jobs: [GroupCommit.Job]) -> [Result<[OperationResult], Error>] {
        let kept = GroupCommit.shared.unpublished(key)
        let start: UnpublishedCommits.Start
        do {
            start = try kept.begin(lock: {
                var held = [try environmentGuard.lockForWriting()]
                do {
                    held.append(try lockZone(name))
                    let z = try zone(name)
                    guard !z.incarnation.isEmpty else { throw ZoneToMake() }
                    return (held, z, try finishInterruptedCommitToHead(z).head)
                } catch {
                    for l in held.reversed() { l.unlock() }
                    throw error
                }
            })
        } catch {
            return jobs.map { _ in .failure(error) }
        }
        let z = start.zone
        let group = Transaction(zone: z, nextSeq: start.head + 1, unpublished: start.unpublished)
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
        guard let last = group.entries.last?.seq else {
            kept.end(committed: nil, head: nil, afterAnswer: publishesAfterAnswer)
            return outcomes
        }
        do {
            if scope == .private { try ShareRegistry.noteShares(of: group, in: z, database: directory) }
            // Made before the commit: nothing may fail between a durable commit and its publication.
            let publisher = publishesAfterAnswer ? try detached() : self
            // A server's record files are written by the publisher, after the answer: the commit
            // path is the history's appends and syncs alone.
            let publication = try commitDurably(group, in: z, files: publishesAfterAnswer ? .onPublication : .besideTheSync)
            kept.end(committed: UnpublishedCommits.Publication(
                changes: UnpublishedCommits.Overlay(records: group.records, refs: group.refs),
                directories: publication.prepared.directoryCount,
                publish: { publisher.publish(publication, in: z) },
                // Its temporary files only: a shard directory it made may be the next group's too.
                abandon: { z.discard(PreparedFiles(items: publication.prepared.items, madeDirectories: [])) }),
                     head: last, afterAnswer: publishesAfterAnswer)
        } catch {
            // Not committed (a commit made is never undone by its database entry: commitDurably).
            kept.end(committed: nil, head: try? z.history.head(), afterAnswer: publishesAfterAnswer)
            return zip(outcomes, wrote).map { o, w in w ? .failure(error) : o }
        }
        return outcomes
    }

    /// Commits a transaction (steps 3–5 above). The caller holds the zone's lock.
    /// `syncsInBackground`: a bulk load's commit (ZoneStore.syncFilesIfDue).
    package func commit(_ tx: Transaction, in z: ZoneStore, syncsInBackground: Bool = false) throws {
        let publication = try commitDurably(tx, in: z, syncsInBackground: syncsInBackground)
        publish(publication, in: z)
    }

    /// What a durable commit leaves to publish (step 5).
    struct CommittedFiles {
        enum Files {
            case prepared(PreparedFiles)
            /// Prepared by the publication (`FileTiming.onPublication`).
            case toPrepare(DerivedFiles)
        }
        let files: Files
        let changes: [RecordChange]
        let last: Int64
        let syncsInBackground: Bool

        /// The temporary files it made before committing (none when the publication makes them).
        var prepared: PreparedFiles {
            if case .prepared(let p) = files { return p }
            return PreparedFiles()
        }
    }

    /// When a commit writes its derived files as temporary files (step 3).
    enum FileTiming {
        /// Before the history: a full disk fails the commit, and nothing is left behind.
        case beforeTheCommit
        /// On another thread while the history syncs (the sync leaves the core idle); the
        /// history's index words wait for them, so a commit whose files could not be made is
        /// taken back before anyone sees it. A command's group.
        case besideTheSync
        /// By the publication, after the answer (a server's groups): nothing but the history on
        /// the commit path. A full disk then fails the publication, which the zone's next lock
        /// holder redoes from the history, as after a crash; readers meanwhile take the commit
        /// from the history.
        case onPublication
    }

    /// Steps 3–4 of a commit: when this returns, the commit is durable.
    func commitDurably(_ tx: Transaction, in z: ZoneStore, syncsInBackground: Bool = false, files timing: FileTiming = .beforeTheCommit) throws -> CommittedFiles {
        guard let last = tx.entries.last?.seq else { return CommittedFiles(files: .prepared(PreparedFiles()), changes: [], last: 0, syncsInBackground: false) }
        var prepared = PreparedFiles()
        // Never beside the sync when a fault is armed, so that the crash points stay in order.
        let overlapping = timing == .besideTheSync && !CrashPoints.isArmed && !tx.records.isEmpty
        let preparing = overlapping ? prepareInBackground(z, tx) : nil
        func append() throws {
            // Files prepared meanwhile must be ready before the commit is seen: if they could
            // not be made, the commit is taken back and fails as a full disk does (step 3).
            let ready: (() throws -> Void)? = preparing.map { p in { if case .failure(let e) = p.wait() { throw e } } }
            try z.history.append(tx.entries, beforeIndexing: ready)
        }
        do {
            // Asset files are content-addressed and may be shared with a concurrent commit of
            // another zone, so a failed commit leaves any it stored (unreferenced, harmless).
            for (sum, bytes) in tx.assets.sorted(by: { $0.key < $1.key }) where !(try assets.contains(checksum: sum)) {
                _ = try assets.put(bytes)
            }
            if !overlapping && timing != .onPublication { prepared = try z.prepare(tx.derivedFiles) }
            if journal.announces(z.zoneID.zoneName) {
                try journal.withDatabaseLock(holdingZone: z.zoneID.zoneName) {
                    // The database's entry is synced first, then the zone's commit, whose append
                    // runs before the entry's index words: no reader sees the entry before the
                    // commit, a commit that fails takes it back, and once the commit is made the
                    // entry stays. So whatever a crash or a power loss interrupts, the database
                    // history holds every zone commit that survived — at worst the entry of a
                    // commit that did not (never answered: a database change with no record change
                    // behind it) — and a change needs no intent. After a crash, the entry is
                    // indexed only once its zone is recovered (RecoveredAnnouncements).
                    try journal.appendDatabaseEntry(DatabaseIntent(op: .change, zoneName: z.zoneID.zoneName, incarnation: z.incarnation, zoneSeq: last),
                                                    beforeIndexing: append)
                }
            } else {
                try append()
            }
        } catch {
            z.discard(prepared)
            if let p = preparing?.wait(), case .success(let files) = p { z.discard(files) }
            throw error
        }
        if let p = preparing?.wait(), case .success(let files) = p { prepared = files }
        return CommittedFiles(files: timing == .onPublication ? .toPrepare(tx.derivedFiles) : .prepared(prepared),
                              changes: tx.changes, last: last, syncsInBackground: syncsInBackground)
    }

    /// Step 5 of a commit: brings the derived files up to date with it. Readers see the commit
    /// before (ZoneSnapshot reads what the files do not hold yet from the history); if this
    /// stops part-way, the next writer of the zone, or ck fsck, finishes it. The caller holds the
    /// zone's lock. Whether everything was published.
    @discardableResult
    func publish(_ c: CommittedFiles, in z: ZoneStore) -> Bool {
        guard c.last > 0 else { return true }
        let files: PreparedFiles
        switch c.files {
        case .prepared(let p): files = p
        case .toPrepare(let d):
            guard let made = try? z.prepare(d) else { return false }
            files = made
        }
        guard (try? z.publish(files)) != nil else { return false }
        let durable = z.syncFilesIfDue(through: c.last, background: c.syncsInBackground)
        guard (try? notifications.deliver(zone: z, changes: c.changes, through: c.last)) != nil, (try? z.setApplied(c.last, durable: durable)) != nil else { return false }
        maintainIndexes(z, through: c.last)
        return true
    }

    /// Brings a zone's record files, reference index, tombstones and notifications up to date
    /// with its history, replaying the entries after the applied cursor: what a commit interrupted
    /// after its point of no return left undone. Idempotent. The caller holds the zone's lock.
    @discardableResult
    func finishInterruptedCommit(_ z: ZoneStore) throws -> Int64 {
        try finishInterruptedCommitToHead(z).replayed
    }

    /// `finishInterruptedCommit`, also returning the history's head: what the caller's entries
    /// are numbered from (it holds the lock, so the head stays).
    func finishInterruptedCommitToHead(_ z: ZoneStore) throws -> (replayed: Int64, head: Int64) {
        // A commit a crash left synced but unindexed is part of the history from here on.
        let head = try z.history.recoverHead()
        let applied = try z.appliedSeq()
        guard applied < head else { return (0, head) }
        let replay = try HistoryReplay(zone: z, after: applied, through: head)
        let prepared = try z.prepare(replay.transaction.derivedFiles)
        try z.publish(prepared)
        z.syncFiles()
        try notifications.deliver(zone: z, changes: replay.transaction.changes, through: head)
        try z.setApplied(head, durable: head)
        return (head - applied, head)
    }

    /// Syncs the record files commits published without syncing (ZoneStore.syncFilesIfDue),
    /// so a restart of the machine redoes none of them. The caller holds the zone's lock and
    /// has finished any interrupted commit.
    func makeRecordFilesDurable(_ z: ZoneStore) throws {
        let c = try z.appliedCursor()
        guard c.durable < c.seq else { return }
        z.syncFiles()
        try z.setApplied(c.seq, durable: c.seq)
    }
}

/// A group found its zone not on the disk (purged since): its requests make it, one by one.
struct ZoneToMake: Error {}

/// The history entries of a range turned back into a transaction: the final state of each
/// record changed, the reference-index changes, and each change with its before and after.
struct HistoryReplay {
    let transaction: Transaction

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

/// Work done on a thread of its own while the caller goes on (a group's record files prepared
/// while the history syncs); `wait` gives its result.
final class Background<T>: @unchecked Sendable {
    private let finished = Gate()

    init(_ work: @escaping () throws -> T) {
        nonisolated(unsafe) let work = work
        let finished = self.finished
        DispatchQueue.global().async { finished.open(Result { try work() }) }
    }

    /// The result, once there is one (any number of times).
    func wait() -> Result<T, Error> { finished.result() }

    /// A result another thread waits for until it is given.
    private final class Gate: @unchecked Sendable {
        private var given: Result<T, Error>?
        private let done = DispatchSemaphore(value: 0)

        func open(_ r: Result<T, Error>) {
            given = r
            done.signal()
        }

        /// The result, once given (any number of times, on any thread).
        func result() -> Result<T, Error> {
            done.wait()
            done.signal()
            return given!
        }
    }
}

/// A transaction's record files prepared on a thread of their own (`commit`'s `overlapsFiles`).
private func prepareInBackground(_ z: ZoneStore, _ tx: Transaction) -> Background<PreparedFiles> {
    let files = tx.derivedFiles
    nonisolated(unsafe) let zone = z
    return Background { try zone.prepare(files) }
}
