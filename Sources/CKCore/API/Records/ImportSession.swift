import CKJSON
import CKModel
import CKStore

/// ck's import (`ck import`): Web Services records — NDJSON, one per line (what `ck export`
/// prints), or one JSON array — saved with `forceReplace` into the zones their zoneIDs name,
/// in records/modify batches of up to 200. A session checks all of its input before it writes
/// anything, so malformed input changes nothing; then it commits batch after batch, handing
/// each batch's results on as it commits. A record identical to the one stored is left as it
/// is (no new change, same tag), so importing an export again is free.
///
/// While it runs, the session is its zones' bulk load (BulkLoad): the index build is done once
/// at the end instead of once per batch, and a zone nobody else writes is not read back.
public struct ImportRequest: Sendable {
    public var input: [UInt8]
    /// Where a record without a zoneID goes.
    public var defaultZone: String
    /// Records per committed batch (at most 200).
    public var batchSize: Int

    public init(input: [UInt8], defaultZone: String = ZoneID.defaultZoneName, batchSize: Int = Limits.operationsPerBatch) {
        self.input = input
        self.defaultZone = defaultZone
        self.batchSize = batchSize
    }
}

/// What one committed batch did: per record in input order, `{recordName, recordChangeTag,
/// zoneID}` or an error dictionary.
public struct ImportBatch {
    public let results: [OperationResult]
    /// Each result as the response shows it (receipts are encoded straight to bytes).
    public let items: [any JSONEncodable]
}

/// The whole import's counts.
public struct ImportSummary: Sendable {
    public var total: Int
    /// Records left as they were (identical to the stored one).
    public var unchanged: Int
    public var failures: [CloudKitError]
}

public final class ImportSession {
    let ctx: RequestContext
    let api: CloudKitAPI
    let source: ImportSource
    let batchSize: Int
    /// The records the input holds, counted by the check.
    public let count: Int
    /// The zones the input names, in the order they first appear.
    let zones: [String]

    init(api: CloudKitAPI, ctx: RequestContext, source: ImportSource, batchSize: Int, count: Int, zones: [String]) {
        self.api = api
        self.ctx = ctx
        self.source = source
        self.batchSize = batchSize
        self.count = count
        self.zones = zones
    }

    /// Commits the records batch after batch; `batch` gets each batch's results as it commits.
    /// Every zone the import wrote to is brought up to date at the end — also when it stops
    /// part-way — and only those: a refused import leaves the data directory as it was.
    public func run(_ batch: (ImportBatch) throws -> Void) throws -> ImportSummary {
        let db = ctx.db
        // One index build at the end instead of one per batch.
        db.defersIndexMaintenance = true
        for z in zones where !z.sameBytes(ZoneID.defaultZoneName) {
            // Custom zones are made as needed in the private database; elsewhere they must exist.
            if ctx.caller.scope == .private { _ = try ZoneLifecycle(db).create(z) } else { _ = try db.zone(z) }
        }
        var summary = ImportSummary(total: 0, unchanged: 0, failures: [])
        var pendingZone: String?
        var pending: [RecordOperation] = []
        var pendingNames = Set<NameKey>()
        var committed = Set<NameKey>()
        // What each zone's load knows while it is the zone's only writer.
        var loads: [NameKey: BulkLoad] = [:]
        for z in zones { loads[NameKey(z)] = BulkLoad(zone: z) }
        func finishLoads() {
            for z in zones where committed.contains(NameKey(z)) { try? db.finishBulkLoad(loads[NameKey(z)]!) }
        }
        func flush() throws {
            guard let z = pendingZone, !pending.isEmpty else { return }
            var assets: [String: [UInt8]] = [:]
            ExportedAssets.collect(pending, store: api.store.assets, into: &assets)
            // A record whose change tag is not newer than the zone's head before the batch was
            // left as it was (same fields: no new change).
            let head = (try? db.zone(z).history.head()) ?? 0
            defer { if ((try? db.zone(z).history.head()) ?? 0) > head { committed.insert(NameKey(z)) } }
            let results = try db.modify(zone: z, ModifyBatch(pending, atomic: false, assets: assets, bulk: loads[NameKey(z)], options: ctx.options))
                .results.map { try ctx.gate.admitWritten($0) }
            let shape = RecordsResponse([], shape: .modify, style: ctx.style)
            var items: [any JSONEncodable] = []
            items.reserveCapacity(results.count)
            for r in results {
                summary.total += 1
                if let e = r.error { summary.failures.append(e) }
                if case .saved(let rec) = r {
                    if let seq = ChangeTag.seq(ofTag: rec.recordChangeTag), seq <= head { summary.unchanged += 1 }
                    items.append(SavedRecordReceipt(rec))
                } else {
                    items.append(shape.item(r))
                }
            }
            pending = []
            pendingNames = []
            try batch(ImportBatch(results: results, items: items))
        }
        do {
            try source.forEach { zone, op in
                // A batch holds one operation per record, as a records/modify request must.
                // Names are compared by their bytes: two spellings of a name are two names.
                if pendingZone.map({ !zone.sameBytes($0) }) ?? true || pending.count == batchSize || pendingNames.contains(NameKey(op.recordName ?? "")) {
                    try flush()
                    pendingZone = zone
                }
                pending.append(op)
                pendingNames.insert(NameKey(op.recordName ?? ""))
            }
            try flush()
        } catch {
            finishLoads()
            throw error
        }
        finishLoads()
        return summary
    }
}

extension CloudKitAPI {
    /// Checks the whole input (BAD_REQUEST naming the first bad line or record) and the
    /// caller's right to write, and returns the session that imports it.
    public func importSession(_ r: ImportRequest, as caller: Caller) throws -> ImportSession {
        guard (1...Limits.operationsPerBatch).contains(r.batchSize) else {
            throw CloudKitError.badRequest("an import batch holds 1 to \(Limits.operationsPerBatch) records, not \(r.batchSize)")
        }
        let ctx = try preflight(.recordsModify, caller, zones: [r.defaultZone], need: .none)
        let source = ImportSource(bytes: r.input, defaultZone: r.defaultZone)
        // First pass: check everything, so bad input writes nothing.
        var zones: [String] = []
        var seen = Set<NameKey>()
        var count = 0
        try source.forEach { zone, _ in
            count += 1
            if seen.insert(NameKey(zone)).inserted { zones.append(zone) }
        }
        if count == 0 { throw CloudKitError.badRequest("import: the input holds no records") }
        try ctx.db.requireWrite()
        return ImportSession(api: self, ctx: ctx, source: source, batchSize: r.batchSize, count: count, zones: zones)
    }
}
