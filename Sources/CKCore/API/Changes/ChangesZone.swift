import CKJSON
import CKModel
import CKStore

/// `changes/zone`: for each zone asked for, the records changed since its token — each once, at
/// its current state, on the page of its latest change (Store/LatestChanges.swift) — with the
/// zone's new token and whether more come. A zone that fails is an item of its own
/// `{zoneID, serverErrorCode, reason}`; the others are still fetched.
public struct ZoneChangesRequest: Sendable {
    public struct Zone: Sendable {
        public var zoneName: String
        /// nil: from the start (or, with `fromBookmarks`, from the device's bookmark).
        public var syncToken: String?
        public var resultsLimit: Int?
        public var desiredKeys: Set<String>?

        public init(zoneName: String, syncToken: String? = nil, resultsLimit: Int? = nil, desiredKeys: Set<String>? = nil) {
            self.zoneName = zoneName
            self.syncToken = syncToken
            self.resultsLimit = resultsLimit
            self.desiredKeys = desiredKeys
        }
    }

    public var zones: [Zone]
    /// ck's own: a zone without a token continues from this device's bookmark for it (what an
    /// app keeps in UserDefaults); without one, from the start.
    public var fromBookmarks: Bool

    public init(zones: [Zone], fromBookmarks: Bool = false) {
        self.zones = zones
        self.fromBookmarks = fromBookmarks
    }

    /// The Web Services body: `{zones: [{zoneID, syncToken?, resultsLimit?, desiredKeys?,
    /// desiredRecordTypes?, reverse?, numbersAsStrings?}], resultsLimit?, desiredKeys?, …}`;
    /// a zone's own values override the request's.
    public init(json body: JSONValue) throws {
        let common: Set<String> = ["resultsLimit", "desiredKeys", "desiredRecordTypes", "reverse", "numbersAsStrings", "numberAsStrings"]
        let o = try RequestBody.object(body, "zone changes request", keys: common.union(["zones"]))
        guard let list = o["zones"]?.arrayValue, !list.isEmpty else { throw CloudKitError.badRequest("zone changes request needs a non-empty 'zones' array") }
        if list.count > Limits.operationsPerBatch {
            throw CloudKitError(.limitExceeded, "a request holds at most \(Limits.operationsPerBatch) zones; this one has \(list.count)")
        }
        let limit = try RequestBody.count(o["resultsLimit"], "resultsLimit", max: Int.max)
        let keys = try RequestBody.desiredKeys(o["desiredKeys"])
        var seen = Set<NameKey>()
        zones = try list.enumerated().map { i, item in
            let z = try RequestBody.object(item, "zones[\(i)]", keys: common.union(["zoneID", "syncToken"]))
            guard let name = try RequestBody.zoneName(z["zoneID"]) else { throw CloudKitError.badRequest("zones[\(i)] needs a 'zoneID'") }
            if !seen.insert(NameKey(name)).inserted { throw CloudKitError.badRequest("zone '\(Names.describe(name))' is asked for more than once") }
            return Zone(zoneName: name, syncToken: try RequestBody.string(z["syncToken"], "zones[\(i)].syncToken"),
                        resultsLimit: try RequestBody.count(z["resultsLimit"], "zones[\(i)].resultsLimit", max: Int.max) ?? limit,
                        desiredKeys: try RequestBody.desiredKeys(z["desiredKeys"]) ?? keys)
        }
        fromBookmarks = false
    }
}

/// One zone of a changes/zone answer: a page of its changes, or its error.
public enum ZoneChangesItem {
    case page(ZoneChangesResult, desiredKeys: Set<String>?)
    case failed(CloudKitError)

    public var error: CloudKitError? { if case .failed(let e) = self { return e }; return nil }
}

/// `{zones: [{zoneID, records, syncToken, moreComing} | error]}`.
public struct ZoneChangesResponse: ResponseBody {
    public var zones: [ZoneChangesItem]
    let style: ResponseStyle

    public var listKey: String? { "zones" }
    public var members: [String: JSONValue] { [:] }
    public var items: [any JSONEncodable] { zones.map(entry) }

    /// The zones that failed, in order.
    public var failures: [CloudKitError] { zones.compactMap(\.error) }

    /// The same answer with only the zones that failed.
    public var failedZones: ZoneChangesResponse { ZoneChangesResponse(zones: zones.filter { $0.error != nil }, style: style) }

    /// One zone's entry; its records are `{recordName, deleted: true, zoneID}` for deletions.
    public func entry(_ item: ZoneChangesItem) -> JSONValue {
        switch item {
        case .page(let p, let keys):
            let records: [JSONValue] = p.changes.map {
                switch $0 {
                case .record(let r): return r.response(style, desiredKeys: keys)
                case .deleted(let name): return Record.tombstone(recordName: name, zoneID: p.zoneID)
                }
            }
            return ["zoneID": p.zoneID.json, "records": .array(records), "syncToken": .string(p.syncToken), "moreComing": .bool(p.moreComing)]
        case .failed(let e): return e.envelope(style: style)
        }
    }
}

extension CloudKitAPI {
    /// One page per zone.
    public func zoneChanges(_ r: ZoneChangesRequest, as caller: Caller) throws -> ZoneChangesResponse {
        try fetchZoneChanges(r, caller) { db, zone, since, limit in try db.changes.zone(zone, since: since, limit: limit) }
    }

    /// ck's `--all`: every page of each zone until moreComing is false, as one page per zone
    /// holding each record once, in its latest state, where it last changed. `more` is asked
    /// between pages (false: stop, the reader went away).
    public func allZoneChanges(_ r: ZoneChangesRequest, as caller: Caller, while more: @escaping () -> Bool = { true }) throws -> ZoneChangesResponse {
        try fetchZoneChanges(r, caller) { db, zone, since, limit in try db.changes.allOfZone(zone, since: since, limit: limit, while: more) }
    }

    /// ck's `--all`, streamed: each page of each zone handed to `page` as it comes (a response of
    /// one zone, with the page's own token, which a script can keep); `page` returns false to
    /// stop. Returns each zone's last page (or error).
    public func followZoneChanges(_ r: ZoneChangesRequest, as caller: Caller, _ page: (ZoneChangesResponse) throws -> Bool) throws -> ZoneChangesResponse {
        var style: ResponseStyle?
        return try fetchZoneChanges(r, caller, styled: { style = $0 }) { db, zone, since, limit in
            try db.changes.followZone(zone, since: since, limit: limit) { p in
                try page(ZoneChangesResponse(zones: [.page(p, desiredKeys: r.zones.first { $0.zoneName.sameBytes(zone) }?.desiredKeys)], style: style!))
            }
        }
    }

    private func fetchZoneChanges(_ r: ZoneChangesRequest, _ caller: Caller, styled: (ResponseStyle) -> Void = { _ in },
                                  _ fetch: (Database, String, String?, Int) throws -> ZoneChangesResult) throws -> ZoneChangesResponse {
        for z in r.zones { try Names.validateZoneName(z.zoneName) }
        let ctx = try preflight(.changesZone, caller, zones: r.zones.map(\.zoneName))
        styled(ctx.style)
        var items: [ZoneChangesItem] = []
        for z in r.zones {
            do {
                let since = try z.syncToken ?? (r.fromBookmarks ? ctx.db.bookmarks.token(zone: z.zoneName) : nil)
                let limit = min(z.resultsLimit ?? Limits.resultsPerPage, Limits.resultsPerPage)
                items.append(.page(try fetch(ctx.db, z.zoneName, since, limit), desiredKeys: z.desiredKeys))
            } catch let e as CloudKitError {
                var err = e
                if err.zoneID == nil { err.zoneID = ctx.db.zoneID(z.zoneName) }
                items.append(.failed(err))
            }
        }
        return ZoneChangesResponse(zones: items, style: ctx.style)
    }
}
