import CKJSON
import CKModel

/// `--at REF` on `record query`: the same answers, as of a point in the zone's history (a
/// sequence number from `HistoryResolver.resolve`). A scan reads the zone as it is now plus the changes since
/// the point (`ZoneStore.forEachRecord(at:in:)`): memory holds only the names those changes
/// touched. `readable` is the permission gate as of that point (PermissionGate's history gate).
extension Queries {
    /// records/query as of `seq`: a scan of the zone as it was then, sorted and paged as a
    /// query is (a continuation marker is bound to the point).
    package func page(in z: ZoneStore, _ req: QueryRequest, at seq: Int64, readable: @escaping (Record) throws -> Bool, pageLimit: Int? = nil,
              after: [JSONValue]? = nil) throws -> QueryResult {
        let snap = try z.snapshot()
        return try answer(req, in: z, binding: req.fingerprint + "|" + db.tokens.zoneScopeKey(z) + "|at " + String(seq), indexed: false, pageLimit: pageLimit, after: after,
                          readable: readable) { body in
            try z.forEachRecord(at: seq, in: snap, body)
        }
    }
}
