import CKJSON
import CKModel

/// A query over every zone of a database at once (`zoneWide: true` on records/query, without
/// a zoneID): the default zone and the custom zones of the private database, the zones shared
/// with the caller in the shared one, the default zone of the public one. One order across the
/// zones — the sorts', then the record name, then the zone — and pages of at most 200 with a
/// continuation marker bound to the query and the database.
///
/// A page asks each zone for its own first page after the marker's record (the engine's query,
/// indexes and permission checks as for one zone) and keeps the best of them all: O(zones ×
/// page) records read a page, however large the zones.
extension Queries {
    /// The key of a record of zone `z` in the zone-wide order: its key in its zone, then the zone.
    static func zoneWideKey(_ r: Record, _ z: ZoneID, _ sorts: [QuerySort]) -> [JSONValue] {
        QueryEngine.key(r, sorts) + zoneKey(z)
    }

    private static func zoneKey(_ z: ZoneID) -> [JSONValue] { [.string(z.zoneName), .string(z.ownerRecordName)] }

    /// What a zone-wide marker is bound to: the query and this database (its container,
    /// environment, scope and owner).
    package func zoneWideBinding(_ req: QueryRequest) -> String {
        req.fingerprint + "|zoneWide|" + db.tokens.databaseScopeKey
    }

    /// A page of at most `limit` records after `after` (a zone-wide key; nil: from the start),
    /// with the key of its last record when more follow. `req`'s own marker is not read.
    package func zoneWidePage(_ req: QueryRequest, after: [JSONValue]?, limit: Int) throws -> (records: [Record], next: [JSONValue]?) {
        // Refused as in one zone, also when the database has no zone to ask.
        try requireIndexes(req, schema: try db.schema())
        var q = req
        q.continuationMarker = nil
        // The marker's record: its key in its zone, and its zone.
        let inZone = after.map { Array($0.dropLast(2)) }
        let markerZone = after.map { Array($0.suffix(2)) }
        var candidates: [(key: [JSONValue], record: Record)] = []
        var more = false
        for z in try db.listZones() {
            let zonePage = try page(in: z, q, pageLimit: limit, after: inZone)
            if zonePage.nextKey != nil { more = true }
            candidates += zonePage.records.map { (Queries.zoneWideKey($0, z.zoneID, q.sorts), $0) }
            // In a zone after the marker's, a record whose key in its zone equals the marker's
            // (the same name, the same sort values) comes after the marker too.
            if let k = inZone, let mz = markerZone, QueryEngine.compare(Queries.zoneKey(z.zoneID), mz, []) > 0,
               let name = k.last?.stringValue, let r = try z.snapshot().record(named: name), try matches(r, q, key: k) {
                candidates.append((Queries.zoneWideKey(r, z.zoneID, q.sorts), r))
            }
        }
        candidates.sort { QueryEngine.compare($0.key, $1.key, q.sorts) < 0 }
        if candidates.count > limit { more = true }
        let kept = candidates.prefix(limit)
        return (kept.map(\.record), more ? kept.last?.key : nil)
    }

    /// Whether `r` answers the query with exactly the key `key` in its zone.
    private func matches(_ r: Record, _ q: QueryRequest, key: [JSONValue]) throws -> Bool {
        guard r.recordType.sameBytes(q.recordType), q.filters.allSatisfy({ QueryMatcher.matches(r, $0) }) else { return false }
        if db.scope != .private, try !db.canRead(r) { return false }
        return QueryEngine.compare(QueryEngine.key(r, q.sorts), key, q.sorts) == 0
    }
}
