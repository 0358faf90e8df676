import CKCrypto
import CKJSON
import CKModel
import Foundation

/// A query runs over a zone in one streaming pass, keeping only the best `limit + 1` matches in
/// memory, so memory stays flat however large the zone is. Results are ordered by the sorts,
/// then by recordName; a continuation marker names the last key returned.
///
/// The queries of one database (`records/query`): one zone's page, every page (QueryPages),
/// a page as of a point of the history (TimeTravel), and every zone at once (ZoneWideQuery).
/// Reached as `db.queries`.
package struct Queries {
    let db: Database

    /// A page of `pageLimit` records (nil: the request's own limit, at most 200); `after`: the
    /// page after that key, and `nextKey` instead of a marker (see Queries.all).
    package func page(in z: ZoneStore, _ req: QueryRequest, pageLimit: Int? = nil, after: [JSONValue]? = nil) throws -> QueryResult {
        try answer(req, in: z, binding: req.fingerprint + "|" + db.tokens.zoneScopeKey(z), indexed: true, pageLimit: pageLimit, after: after) { body in
            try z.snapshot().forEachRecord(body)
        }
    }

    /// The query's indexes, or CloudKit's refusal. Development refuses what production
    /// refuses: an app that passes here passes there.
    package func requireIndexes(_ req: QueryRequest, schema: Schema) throws {
        guard var refusal = QueryIndexes(req, in: schema).refusal else { return }
        if db.address.environment == .production, refusal.nextStep == .defineRecordType(req.recordType) { refusal.nextStep = .deploySchema }
        throw refusal
    }

    /// What every way of answering a query shares: the schema's checks, the marker, the best
    /// page from the indexes (`indexed`) or else from `scan` — every record, filtered, checked for
    /// read permission, and the best `limit + 1` kept — and the next marker, bound to `binding`.
    /// `readable`: the read check of a query as of a point of the history (else the gate's now).
    func answer(_ req: QueryRequest, in z: ZoneStore, binding: String, indexed: Bool, pageLimit: Int? = nil, after afterKey: [JSONValue]? = nil,
              readable: ((Record) throws -> Bool)? = nil, scan: ((Record) throws -> Bool) throws -> Void) throws -> QueryResult {
        let schema = try db.schema()
        for f in req.filters {
            if let why = f.typeMismatch(recordType: req.recordType, schema: schema) { throw CloudKitError.badRequest(why) }
        }
        try requireIndexes(req, schema: schema)
        let after = try afterKey ?? req.continuationMarker.map { try QueryEngine.decodeMarker($0, binding: binding, secret: try db.tokens.secret.existing()) }
        let limit = pageLimit ?? max(1, min(req.resultsLimit, Limits.resultsPerPage))
        var best: [(key: [JSONValue], record: Record)]
        if indexed, let hits = try IndexedQuery(db: db, zone: z, req: req, after: after, limit: limit).run() {
            best = hits
        } else {
            QueryDebug.trace?("scan")
            best = []
            // Public GRANTs; in the shared database, what is shared.
            let checksReads = db.scope != .private
            try scan { r in
                guard r.recordType == req.recordType, req.filters.allSatisfy({ QueryMatcher.matches(r, $0) }) else { return true }
                if let readable { if try !readable(r) { return true } } else if checksReads, try !db.canRead(r) { return true }
                let key = QueryEngine.key(r, req.sorts)
                if let a = after, QueryEngine.compare(key, a, req.sorts) <= 0 { return true }
                QueryEngine.insert((key, r), into: &best, limit: limit, sorts: req.sorts)
                return true
            }
        }
        var marker: String?
        var nextKey: [JSONValue]?
        if best.count > limit {
            best.removeLast()
            // Pages read in one process follow each other by key: no marker, no secret made.
            if pageLimit != nil { nextKey = best.last!.key }
            else { marker = QueryEngine.encodeMarker(best.last!.key, binding: binding, secret: try db.tokens.secret.getOrCreate()) }
        }
        return QueryResult(records: best.map(\.record), continuationMarker: marker, nextKey: nextKey)
    }
}

extension Database {
    package var queries: Queries { Queries(db: self) }
}

package enum QueryEngine {
    /// Keeps `best` the smallest `limit + 1` keys seen, in order.
    package static func insert(_ h: (key: [JSONValue], record: Record), into best: inout [(key: [JSONValue], record: Record)], limit: Int, sorts: [QuerySort]) {
        if best.count == limit + 1, compare(h.key, best[limit].key, sorts) >= 0 { return }
        var lo = 0, hi = best.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if compare(best[mid].key, h.key, sorts) < 0 { lo = mid + 1 } else { hi = mid }
        }
        best.insert(h, at: lo)
        if best.count > limit + 1 { best.removeLast() }
    }

    package static func key(_ r: Record, _ sorts: [QuerySort]) -> [JSONValue] {
        var k: [JSONValue] = sorts.map { s in
            guard let f = QueryMatcher.fieldValue(r, s.fieldName), !f.type.isList else { return .null }
            if let rel = s.relativeLocation { return QueryMatcher.distance(f.value, rel).map(JSONValue.double) ?? .null }
            if let sc = QueryMatcher.scalar(f.value) {
                switch sc {
                case .number(let d): return .double(d)
                case .text(let t): return .string(t)
                }
            }
            return .null
        }
        k.append(.string(r.recordName))
        return k
    }

    /// Total order over keys; missing values sort last; the trailing recordName breaks ties.
    package static func compare(_ a: [JSONValue], _ b: [JSONValue], _ sorts: [QuerySort]) -> Int {
        for i in 0..<min(a.count, b.count) {
            let asc = i < sorts.count ? sorts[i].ascending : true
            var c: Int
            switch (a[i].isNull, b[i].isNull) {
            case (true, true): c = 0
            case (true, false): c = 1
            case (false, true): c = -1
            default: c = QueryMatcher.compare(a[i], b[i]) ?? 0
                if !asc { c = -c }
            }
            if c != 0 { return c }
        }
        return 0
    }

    static let markerPrefix = "ck1q."

    /// A continuation marker: the last key returned, bound to the query and the zone, signed
    /// like change tokens, so an edited or foreign marker is refused instead of paging wrong.
    package static func encodeMarker(_ key: [JSONValue], binding: String, secret: [UInt8]) -> String {
        let j: JSONValue = ["v": 2, "b": .string(binding), "after": .array(key)]
        let body = Base64URL.encode(Array(JSONWriter.compact(j).utf8))
        return markerPrefix + body + "." + Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array((markerPrefix + body).utf8)).prefix(16)))
    }

    package static func decodeMarker(_ m: String, binding: String, secret: [UInt8]?) throws -> [JSONValue] {
        let bad = CloudKitError.badRequest("continuation marker is not one ck issued (edited, truncated or from another store)")
        guard m.hasPrefix(markerPrefix), m.utf8.count < 1 << 20, let secret = secret else { throw bad }
        let parts = m.dropFirst(markerPrefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw bad }
        // A String added to a String: adding the Substring took the generic path, whose first
        // call in a process looked up its witnesses (230,000 instructions, 1 % of a page).
        let mac = Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array((markerPrefix + String(parts[0])).utf8)).prefix(16)))
        guard String(parts[1]) == mac, let bytes = Base64URL.decode(String(parts[0])), let j = try? JSONParser.parse(bytes),
              j["v"] == .int(2), let b = j["b"]?.stringValue, let after = j["after"]?.arrayValue, !after.isEmpty
        else { throw bad }
        guard b.sameBytes(binding) else { throw CloudKitError.badRequest("continuation marker belongs to a different query or zone") }
        return after
    }
}
