import CKModel

/// What the API's preflight decided for one request, which the store's writes follow: passed
/// with each write, never left on the `Database` (one database may serve several requests).
package struct RequestOptions {
    /// Per-record faults armed for the request's endpoint (`ck fault add --record`).
    package var faults: RecordFaults?
    /// For a web client (`ck serve`): the rule its asset values follow.
    package var webAssets: WebAssetRule?

    package init(faults: RecordFaults? = nil, webAssets: WebAssetRule? = nil) {
        self.faults = faults
        self.webAssets = webAssets
    }
}

/// Per-record faults (Docs/faults.md): asked once for each record a records/modify or
/// records/lookup request names, with the operation, the zone and the record name; an error
/// fails that record only, as the service fails one item of a batch.
package struct RecordFaults {
    private let find: (_ op: Endpoint, _ zone: String, _ recordName: String) throws -> CloudKitError?

    package init(_ find: @escaping (_ op: Endpoint, _ zone: String, _ recordName: String) throws -> CloudKitError?) {
        self.find = find
    }

    /// The fault for one record, if any, shaped as the service's per-record error.
    package func fault(_ op: Endpoint, zone z: ZoneStore, recordName: String) throws -> CloudKitError? {
        guard var e = try find(op, z.zoneID.zoneName, recordName) else { return nil }
        e.recordName = recordName
        e.zoneID = z.zoneID
        if e.code == .conflict || e.code == .exists, let r = try? z.record(named: recordName) { e.serverRecord = r }
        return e
    }
}

/// One records/modify request as the store takes it: the operations, in order, and how to
/// apply them.
package struct ModifyBatch {
    package var operations: [RecordOperation]
    /// In a custom zone, all or nothing (ATOMIC_ERROR for the others).
    package var atomic: Bool
    /// Uploaded asset bytes by checksum, stored with the commit that references them.
    package var assets: [String: [UInt8]]
    /// The load this batch belongs to (`ck import`), which may know the zone (BulkLoad).
    package var bulk: BulkLoad?
    package var options: RequestOptions

    package init(_ operations: [RecordOperation], atomic: Bool = true, assets: [String: [UInt8]] = [:], bulk: BulkLoad? = nil,
                 options: RequestOptions = RequestOptions()) {
        self.operations = operations
        self.atomic = atomic
        self.assets = assets
        self.bulk = bulk
        self.options = options
    }
}

/// What a records/modify did: one result per operation, and the record types and fields it
/// defined just in time (development), for the answer to announce.
package struct ModifyOutcome {
    package var results: [OperationResult]
    package var definedSchema: Schema
}
