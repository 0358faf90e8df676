/// `--at REF` on `record get`, `record list`, `record query` and `export`: the same answers, as
/// of a point in the zone's history (a sequence number from `resolve`). Reads follow each
/// record's own history (`ZoneStore.version`), and a scan reads the zone as it is now plus the
/// changes since the point (`ZoneStore.forEachRecord(at:in:)`): memory holds only the names
/// those changes touched.
extension Database {
    /// records/lookup as of `seq`: a record, or NOT_FOUND, per name.
    public func lookup(zone name: String, recordNames: [String], at seq: Int64) throws -> [OperationResult] {
        let z = try zone(name)
        let snap = try z.snapshot()
        return try recordNames.map { n in
            try Names.validateRecordName(n)
            if let r = try z.version(of: n, at: seq, in: snap)?.record {
                guard try canRead(r) else {
                    return .failed(CloudKitError(.accessDenied, "records of type '\(r.recordType)' are not readable by this user (schema GRANTs)", recordName: n, zoneID: z.zoneID))
                }
                return .saved(r)
            }
            return .failed(CloudKitError(.notFound, "record '\(Names.describe(n))' did not exist at \(z.zoneID.zoneName)@\(seq)", recordName: n, zoneID: z.zoneID))
        }
    }

    /// Every record the caller may read, as of `seq`.
    public func forEachRecord(zone z: ZoneStore, at seq: Int64, _ body: (Record) throws -> Bool) throws {
        let snap = try z.snapshot()
        try z.forEachRecord(at: seq, in: snap) { r in try canRead(r) ? body(r) : true }
    }

    /// records/query as of `seq`: a scan of the zone as it was then, sorted and paged as a
    /// query is (a continuation marker is bound to the point).
    public func query(zone name: String, _ req: QueryRequest, at seq: Int64) throws -> QueryResult {
        try query(in: try zone(name), req, at: seq)
    }

    func query(in z: ZoneStore, _ req: QueryRequest, at seq: Int64, pageLimit: Int? = nil, after: [JSONValue]? = nil) throws -> QueryResult {
        let snap = try z.snapshot()
        return try answer(req, in: z, binding: req.fingerprint + "|" + zoneScopeKey(z) + "|at " + String(seq), indexed: false, pageLimit: pageLimit, after: after) { body in
            try z.forEachRecord(at: seq, in: snap, body)
        }
    }
}
