import CKModel

/// The first half of a records/modify: one request's operations applied, in order, to a
/// transaction of the zone in memory — a new transaction, or a child of a group commit's — with
/// the request's atomicity, faults and results. Nothing is written; `Database.commit` is the
/// other half, the same for a request committed alone under the zone's lock and for a group.
final class BatchApplication {
    private let batch: ModifyBatch
    private let db: Database
    private let user: UserAccount
    /// Atomic, and in a custom zone (the default zone has no atomic batches).
    private let atomically: Bool
    /// Decided once per operation, however many times the batch is applied.
    private let injected: [CloudKitError?]
    private var schema: Schema
    private var roles: Set<String>
    private var schemaContext: SchemaContext
    /// Names a bulk load knows are not in the zone (BulkLoad).
    var knownAbsent: ((NameKey) -> Bool)?
    /// What the last application defined just in time, once `defineSchema` stored it.
    private(set) var defined = Schema()

    init(_ batch: ModifyBatch, database db: Database, zone z: ZoneStore, user: UserAccount) throws {
        self.batch = batch
        self.db = db
        self.user = user
        atomically = batch.atomic && !z.zoneID.isDefault
        injected = try batch.operations.map { op in
            try op.recordName.flatMap { try batch.options.faults?.fault(.recordsModify, zone: z, recordName: $0) }
        }
        schema = try db.schema()
        roles = try db.callerRoles()
        schemaContext = SchemaContext(schema: schema, environment: db.address.environment)
    }

    /// The schema and roles as they are now (under the locks a commit holds).
    func refreshSchema() throws {
        db.forgetCachedSchema()
        schema = try db.schema()
        roles = try db.callerRoles()
    }

    /// Whether the last application defined types or fields.
    var definesSchema: Bool { schemaContext.changed }

    /// Types and fields the last application defined just in time go into the schema, before
    /// the commit, so no record is ever stored under a schema that lacks its fields.
    func defineSchema() throws {
        guard schemaContext.changed else { return }
        try db.schemaAdmin.store(db.address.environment).merge(schemaContext.additions)
        defined = schemaContext.additions
    }

    /// Applies the operations to zone `z`: into a new transaction whose first entry is
    /// `nextSeq`, or into a child of `group`. A failed atomic batch leaves the transaction empty.
    func apply(to z: ZoneStore, nextSeq: Int64, in group: Transaction? = nil) throws -> (Transaction, [OperationResult]) {
        let operations = batch.operations
        schemaContext = SchemaContext(schema: schema, environment: db.address.environment)
        var writer = RecordWriter(zone: z, scope: db.scope, user: user, deviceID: db.caller.deviceID, now: db.clock.now(), assets: db.assets,
                                  schema: schemaContext, roles: roles)
        writer.access = db.shareAccess
        writer.webAssets = batch.options.webAssets
        let tx = group?.child() ?? Transaction(zone: z, nextSeq: nextSeq, knownAbsent: knownAbsent)
        tx.assets = batch.assets
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
            try dropAtomicBatch(failedAt: f, results: &results, zone: z, group: group)
            tx.entries = []
            tx.changes = []
        }
        return (tx, results)
    }

    /// An atomic batch failed at operation `f`: the operations before it fail with
    /// ATOMIC_ERROR, and the record the failure carries is the one the server holds, not what
    /// the batch's earlier operations made of it (a share's creation changes its root).
    private func dropAtomicBatch(failedAt f: Int, results: inout [OperationResult], zone z: ZoneStore, group: Transaction?) throws {
        for i in 0..<f {
            results[i] = .failed(CloudKitError(.atomicError, "atomic batch failed", recordName: batch.operations[i].recordName ?? results[i].recordName))
        }
        guard f > 0, case .failed(var e) = results[f], let held = e.serverRecord,
              let found = try group?.record(held.recordName) ?? z.recordForWrite(named: held.recordName), found != held else { return }
        e.serverRecord = found
        if e.code == .conflict {
            e.reason = "record '\(Names.describe(held.recordName))' was changed by an earlier operation of this request (its tag became \(held.recordChangeTag)); the server holds tag \(found.recordChangeTag): send this operation in a request of its own, with that tag"
            e.nextStep = .retryWithTag(recordName: found.recordName, tag: found.recordChangeTag)
        } else if let step = e.nextStep, case .updateInstead = step {
            e.nextStep = .updateInstead(recordName: found.recordName, tag: found.recordChangeTag)
        }
        results[f] = .failed(e)
    }
}

extension OperationResult {
    /// The record the result is about.
    var recordName: String? {
        switch self {
        case .saved(let rec): return rec.recordName
        case .deleted(let n, _, _): return n
        case .failed(let e): return e.recordName
        }
    }
}
