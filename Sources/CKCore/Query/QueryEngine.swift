import Foundation

/// Runs a query over a zone in one streaming pass, keeping only the best `limit + 1` matches in
/// memory, so memory stays flat however large the zone is. Results are ordered by the sorts,
/// then by recordName; a continuation marker names the last key returned.
public struct QueryResult {
    public var records: [Record]
    public var continuationMarker: String?
    /// Why production would refuse this query, when development answered it anyway.
    public var warnings: [String] = []
}

extension Database {
    public func query(zone name: String, _ req: QueryRequest) throws -> QueryResult {
        let z = try zone(name)
        var warnings: [String] = []
        if let why = SchemaRules.refusal(req, in: try schema()) {
            if address.environment == .production { throw CloudKitError.badRequest(why) }
            warnings.append("production would refuse this query: \(why)")
        }
        let publicDB = scope == .public
        let after = try req.continuationMarker.map { try QueryEngine.decodeMarker($0, fingerprint: req.fingerprint) }
        let limit = max(1, min(req.resultsLimit, Limits.resultsPerPage))
        var best: [(key: [JSONValue], record: Record)] = []
        try z.forEachRecord { r in
            guard r.recordType == req.recordType, req.filters.allSatisfy({ QueryMatcher.matches(r, $0) }) else { return true }
            if publicDB, try !canRead(r) { return true }
            let key = QueryEngine.key(r, req.sorts)
            if let a = after, QueryEngine.compare(key, a, req.sorts) <= 0 { return true }
            if best.count == limit + 1, QueryEngine.compare(key, best[limit].key, req.sorts) >= 0 { return true }
            var lo = 0, hi = best.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if QueryEngine.compare(best[mid].key, key, req.sorts) < 0 { lo = mid + 1 } else { hi = mid }
            }
            best.insert((key, r), at: lo)
            if best.count > limit + 1 { best.removeLast() }
            return true
        }
        var marker: String?
        if best.count > limit {
            best.removeLast()
            marker = QueryEngine.encodeMarker(best.last!.key, fingerprint: req.fingerprint)
        }
        return QueryResult(records: best.map(\.record), continuationMarker: marker, warnings: warnings)
    }
}

enum QueryEngine {
    static func key(_ r: Record, _ sorts: [QuerySort]) -> [JSONValue] {
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
    static func compare(_ a: [JSONValue], _ b: [JSONValue], _ sorts: [QuerySort]) -> Int {
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

    static func encodeMarker(_ key: [JSONValue], fingerprint: String) -> String {
        let j: JSONValue = ["v": 1, "q": .string(fingerprint), "after": .array(key)]
        return Data(JSONWriter.compact(j).utf8).base64EncodedString()
    }

    static func decodeMarker(_ m: String, fingerprint: String) throws -> [JSONValue] {
        guard let d = Data(base64Encoded: m), let j = try? JSONParser.parse(Array(d)), j["v"] == .int(1),
              let q = j["q"]?.stringValue, let after = j["after"]?.arrayValue, !after.isEmpty
        else { throw CloudKitError.badRequest("continuation marker is not one ck issued") }
        guard q == fingerprint else { throw CloudKitError.badRequest("continuation marker belongs to a different query") }
        return after
    }
}
