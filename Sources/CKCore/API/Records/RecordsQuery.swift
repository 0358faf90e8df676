import CKJSON
import CKModel
import CKStore

/// `records/query`: the records of a type matching filters, sorted, a page of at most 200 with a
/// continuation marker while more follow. The engine checks every candidate against the
/// permission gate before it counts towards a page (a query cannot drop records after paging
/// without losing some). ck adds `at`: the query as of a point of the zone's history.
public struct QueryRecordsRequest: Sendable {
    public var query: QueryRequest
    /// nil: the zone `at` names, else `_defaultZone`.
    public var zoneName: String?
    public var at: HistoryReference?
    /// `zoneWide`: every zone of the database (Query/ZoneWideQuery.swift), when no zoneID is
    /// given (a zoneID wins, as Apple's reference says).
    public var zoneWide = false
    /// `numbersAsStrings`: number fields answered as strings, and filter values taken as
    /// strings (NumbersAsStrings).
    public var numbersAsStrings = false

    public init(_ query: QueryRequest, zoneName: String? = nil, at: HistoryReference? = nil) {
        self.query = query
        self.zoneName = zoneName
        self.at = at
    }

    /// The Web Services body: `{query: {recordType, filterBy, sortBy}, zoneID?, resultsLimit?,
    /// continuationMarker?, desiredKeys?, zoneWide?, numbersAsStrings?}`.
    public init(json body: JSONValue) throws {
        let numbersAsStrings = try RequestBody.bool(body["numbersAsStrings"], "numbersAsStrings") ?? false
        let zoneWide = try RequestBody.bool(body["zoneWide"], "zoneWide") ?? false
        let (q, zone) = try QueryRequest.parse(numbersAsStrings ? QueryRecordsRequest.numbersTaken(body) : body)
        if let z = zone { try Names.validateZoneName(z) }
        self.init(q, zoneName: zone)
        self.zoneWide = zoneWide && zone == nil
        self.numbersAsStrings = numbersAsStrings
    }

    /// The body with the typed number values of its filters given as strings read as numbers.
    static func numbersTaken(_ body: JSONValue) -> JSONValue {
        guard var o = body.objectValue, var q = o["query"]?.objectValue, let filters = q["filterBy"]?.arrayValue else { return body }
        q["filterBy"] = .array(filters.map { f in
            guard var fo = f.objectValue, let v = fo["fieldValue"] else { return f }
            fo["fieldValue"] = NumbersAsStrings.taken(fieldDictionary: v)
            return .object(fo)
        })
        o["query"] = .object(q)
        return .object(o)
    }

    /// The query with its untyped filter values read as numbers where the schema makes the
    /// field INT64 or DOUBLE: a string value there spells a number (`numbersAsStrings`).
    func query(numbersFrom schema: () throws -> Schema) rethrows -> QueryRequest {
        guard numbersAsStrings else { return query }
        var q = query
        let fields = try schema().types[q.recordType]?.fields ?? [:]
        for (i, f) in q.filters.enumerated() where f.value.type.base == .string {
            guard let t = fields[f.fieldName]?.type.fieldType, NumbersAsStrings.applies(to: t) else { continue }
            let type = FieldType(t.base, list: f.value.type.isList)
            if let v = try? RecordField.canonical(name: f.fieldName, type: type, value: NumbersAsStrings.taken(f.value.value)) {
                q.filters[i].value = RecordField(type: type, value: v)
            }
        }
        return q
    }
}

/// `{records: [...], continuationMarker?}`: the marker only while more pages follow.
public struct QueryRecordsResponse: ResponseBody {
    public var records: [Record]
    public var continuationMarker: String?
    let style: ResponseStyle
    let desiredKeys: Set<String>?

    public var listKey: String? { "records" }
    public var items: [any JSONEncodable] { records.map { $0.encodableResponse(style, desiredKeys: desiredKeys) } }
    public var members: [String: JSONValue] { continuationMarker.map { ["continuationMarker": .string($0)] } ?? [:] }
}

extension CloudKitAPI {
    public func queryRecords(_ r: QueryRecordsRequest, as caller: Caller) throws -> QueryRecordsResponse {
        if r.zoneWide {
            var first: QueryRecordsResponse?
            try queryZoneWide(r, caller, onePage: true) { first = $0; return false }
            return first!
        }
        let (ctx, zone, seq) = try openQuery(r, caller)
        let q = try r.query(numbersFrom: ctx.db.schema)
        let page = try seq.map { s in try ctx.db.queries.page(in: zone, q, at: s, readable: ctx.readable(in: zone, at: s)) } ?? ctx.db.queries.page(in: zone, q)
        return QueryRecordsResponse(records: try page.records.compactMap { try ctx.gate.shown($0) }, continuationMarker: page.continuationMarker,
                                    style: ctx.style.numbersAsStrings(r.numbersAsStrings), desiredKeys: r.query.desiredKeys)
    }

    /// Every page of a query in one call (ck's `--all`), each handed to `page` as it is read
    /// (false: stop); no markers are made. The same records, in the same order, as following
    /// every marker.
    public func queryAllRecords(_ r: QueryRecordsRequest, as caller: Caller, _ page: (QueryRecordsResponse) throws -> Bool) throws {
        if r.zoneWide { return try queryZoneWide(r, caller, onePage: false, page) }
        let (ctx, zone, seq) = try openQuery(r, caller)
        let q = try r.query(numbersFrom: ctx.db.schema)
        try ctx.db.queries.all(zone: zone.zoneID.zoneName, q, at: seq.map { s in (s, ctx.readable(in: zone, at: s)) }) { p in
            try page(QueryRecordsResponse(records: try p.records.compactMap { try ctx.gate.shown($0) }, continuationMarker: nil,
                                          style: ctx.style.numbersAsStrings(r.numbersAsStrings), desiredKeys: r.query.desiredKeys))
        }
    }

    /// A zone-wide query (Query/ZoneWideQuery.swift): its page, with a marker while more
    /// follow (`onePage`), or else every page in turn, without markers, until `page` says stop.
    private func queryZoneWide(_ r: QueryRecordsRequest, _ caller: Caller, onePage: Bool, _ page: (QueryRecordsResponse) throws -> Bool) throws {
        try Names.validateRecordType(r.query.recordType)
        if r.at != nil { throw CloudKitError.badRequest("a zoneWide query reads the database as it is now; a point of history names one zone") }
        let ctx = try preflight(.recordsQuery, caller)
        let q = try r.query(numbersFrom: ctx.db.schema)
        let binding = ctx.db.queries.zoneWideBinding(q)
        var after = try q.continuationMarker.map { try QueryEngine.decodeMarker($0, binding: binding, secret: try ctx.db.tokens.secret.existing()) }
        let limit = onePage ? max(1, min(q.resultsLimit, Limits.resultsPerPage)) : Limits.resultsPerPage
        while true {
            let p = try ctx.db.queries.zoneWidePage(q, after: after, limit: limit)
            var response = QueryRecordsResponse(records: try p.records.compactMap { try ctx.gate.shown($0) }, continuationMarker: nil,
                                                style: ctx.style.numbersAsStrings(r.numbersAsStrings), desiredKeys: r.query.desiredKeys)
            if onePage { response.continuationMarker = try p.next.map { QueryEngine.encodeMarker($0, binding: binding, secret: try ctx.db.tokens.secret.getOrCreate()) } }
            guard try page(response), !onePage, let next = p.next else { return }
            after = next
        }
    }

    private func openQuery(_ r: QueryRecordsRequest, _ caller: Caller) throws -> (RequestContext, ZoneStore, Int64?) {
        try Names.validateRecordType(r.query.recordType)
        let ctx = try preflight(.recordsQuery, caller, zones: [r.zoneName ?? ZoneID.defaultZoneName])
        let z = try ctx.db.zone(try ctx.zoneName(r.zoneName, at: r.at))
        return (ctx, z, try ctx.point(r.at, in: z))
    }
}

/// Every record of a zone the caller may read (`record list`, like the Console's browser):
/// in storage order, which is stable for the same data; no index needed.
public struct ListRecordsRequest: Sendable {
    /// nil: the zone `at` names, else `_defaultZone`.
    public var zoneName: String?
    public var recordType: String?
    public var desiredKeys: Set<String>?
    public var at: HistoryReference?

    public init(zoneName: String? = nil, recordType: String? = nil, desiredKeys: Set<String>? = nil, at: HistoryReference? = nil) {
        self.zoneName = zoneName
        self.recordType = recordType
        self.desiredKeys = desiredKeys
        self.at = at
    }
}

/// Records handed on a batch at a time; `item(i)` encodes one as a response shows it, and may
/// be called from several threads (the CLI encodes a batch on every core).
public struct RecordBatch {
    public let records: [Record]
    let style: ResponseStyle
    let desiredKeys: Set<String>?

    public var count: Int { records.count }
    public func item(_ i: Int) -> any JSONEncodable { records[i].encodableResponse(style, desiredKeys: desiredKeys) }
}

extension CloudKitAPI {
    /// Streams the records in batches of 512 (`batch` returns false to stop): memory stays flat
    /// however large the zone.
    public func listRecords(_ r: ListRecordsRequest, as caller: Caller, _ batch: (RecordBatch) throws -> Bool) throws {
        if let t = r.recordType { try Names.validateRecordType(t) }
        let ctx = try preflight(.recordsQuery, caller, zones: [r.zoneName ?? ZoneID.defaultZoneName])
        let z = try ctx.db.zone(try ctx.zoneName(r.zoneName, at: r.at))
        let seq = try ctx.point(r.at, in: z)
        // A list is a query without a filter (records/query): production answers it only for a
        // type whose ___recordID is QUERYABLE, as it answers `record query` (reference §6). A list
        // of every type is a query of each: refused for the first that is not indexed.
        if caller.environment == .production {
            let schema = try ctx.db.schema()
            let types = r.recordType.map { [$0] } ?? schema.types.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for t in types {
                do { try ctx.db.queries.requireIndexes(QueryRequest(recordType: t), schema: schema) } catch var refusal as CloudKitError where r.recordType == nil {
                    refusal.reason = "record type '\(t)': \(refusal.reason); a list in production is a query of each type"
                    throw refusal
                }
            }
        }
        var pending: [Record] = []
        var stopped = false
        func flush() throws {
            guard !pending.isEmpty else { return }
            let b = RecordBatch(records: pending, style: ctx.style, desiredKeys: r.desiredKeys)
            pending = []
            if try !batch(b) { stopped = true }
        }
        let readable = seq.map { ctx.readable(in: z, at: $0) } ?? ctx.gate.canRead
        try ctx.forEachRecord(z, at: seq) { rec, _ in
            if r.recordType.map({ rec.recordType == $0 }) ?? true, try readable(rec), let shown = try ctx.gate.shown(rec) { pending.append(shown) }
            if pending.count == 512 { try flush() }
            return !stopped
        }
        if !stopped { try flush() }
    }
}

extension RequestContext {
    /// The read check as of point `seq` of zone `z`'s history: what the caller could read then.
    func readable(in z: ZoneStore, at seq: Int64) -> (Record) throws -> Bool {
        let history = gate.history(z)
        return { try history.canRead($0, at: seq) }
    }

    /// Every record of a zone as of `seq` (nil: now), with `prepare(record)` worked out on the
    /// threads that read the records where it can be (else nil: the caller works it out).
    func forEachRecord(_ z: ZoneStore, at seq: Int64?, prepare: ((Record) -> String)? = nil, _ body: (Record, String?) throws -> Bool) throws {
        guard let seq else {
            try z.snapshot().forEachRecord(prepare: prepare, body)
            return
        }
        try z.forEachRecord(at: seq, in: try z.snapshot()) { try body($0, nil) }
    }
}
