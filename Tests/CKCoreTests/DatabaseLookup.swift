import CKModel
@testable import CKStore

/// Records by name straight from a `Database`, for the tests of the store's own mechanics
/// (commits, history, fsck). The API's records/lookup, with its permission gate and faults, is
/// what everything else uses.
extension Database {
    /// A record or a NOT_FOUND error per name (ACCESS_DENIED for a record the schema's GRANTs hide).
    func lookup(zone name: String, recordNames: [String]) throws -> [OperationResult] {
        let z = try zone(name)
        let snapshot = try z.snapshot()
        return try recordNames.map { n in
            try Names.validateRecordName(n)
            if let r = try snapshot.record(named: n) {
                guard try canRead(r) else {
                    // A record not shared with a participant is, to them, no record at all.
                    if scope == .shared { return .failed(CloudKitError(.notFound, "record '\(Names.describe(n))' not found", recordName: n, zoneID: z.zoneID)) }
                    return .failed(CloudKitError(.accessDenied, "records of type '\(r.recordType)' are not readable by this user (schema GRANTs)", recordName: n, zoneID: z.zoneID))
                }
                return .saved(r)
            }
            return .failed(CloudKitError(.notFound, "record '\(Names.describe(n))' not found", recordName: n, zoneID: z.zoneID))
        }
    }
}
