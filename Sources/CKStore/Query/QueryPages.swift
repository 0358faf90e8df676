import CKJSON
import CKModel

/// Every page of a query in one call (`ck record query --all`): the same records, in the same
/// order, as following each continuation marker — but read in pages of `streamedPage` from one
/// zone store, so the indexes are planned (and shard directories opened) once per thousands of
/// records rather than once per 200, and a filter's index can be walked instead of every name.
/// Memory stays that of one such page.
extension Queries {
    static let streamedPage = 2000

    /// `body` gets each page (false: stop); `at` queries the zone as of that history entry,
    /// with `readable` the read check as of then.
    package func all(zone name: String, _ req: QueryRequest, at point: (seq: Int64, readable: (Record) throws -> Bool)? = nil,
             _ body: (QueryResult) throws -> Bool) throws {
        let z = try db.zone(name)
        // The first page starts at the request's marker (if any); each next one at the key the
        // page before ended on — no marker is made, so nothing is written (no token secret).
        var after: [JSONValue]?
        while true {
            // A zone deleted (or deleted and made again) between pages ends the query, as a
            // marker of the zone that was would.
            if after != nil, try db.zone(name).incarnation != z.incarnation {
                throw CloudKitError(.zoneNotFound, "zone '\(Names.describe(name))' was deleted while the query read it", zoneID: z.zoneID)
            }
            let next = try point.map { try page(in: z, req, at: $0.seq, readable: $0.readable, pageLimit: Queries.streamedPage, after: after) }
                ?? page(in: z, req, pageLimit: Queries.streamedPage, after: after)
            guard try body(next), let k = next.nextKey else { return }
            after = k
        }
    }
}
