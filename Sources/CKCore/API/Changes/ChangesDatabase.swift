import CKJSON
import CKModel
import CKStore

/// `changes/database`: the custom zones created, written, deleted or purged since a token, each
/// once, as of its latest change: `{zones: [{zoneID, deleted, purged?}], syncToken, moreComing}`.
public struct DatabaseChangesRequest: Sendable {
    /// nil: from the start (or, with `fromBookmark`, from the device's bookmark).
    public var syncToken: String?
    public var resultsLimit: Int?
    /// ck's own: without a token, continue from this device's bookmark of the database.
    public var fromBookmark: Bool

    public init(syncToken: String? = nil, resultsLimit: Int? = nil, fromBookmark: Bool = false) {
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
        self.fromBookmark = fromBookmark
    }

    /// The Web Services body: `{syncToken?, resultsLimit?}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "database changes request", keys: ["syncToken", "resultsLimit"])
        self.init(syncToken: try RequestBody.string(o["syncToken"], "syncToken"), resultsLimit: try RequestBody.count(o["resultsLimit"], "resultsLimit", max: Int.max))
    }
}

public struct DatabaseChangesResponse: ResponseBody {
    public var result: DatabaseChangesResult

    public var listKey: String? { "zones" }
    public var items: [any JSONEncodable] {
        // `purged` only on a purged zone's entry: the others keep the recorded shape {zoneID, deleted}.
        result.zones.map { z -> JSONValue in
            var o: [String: JSONValue] = ["zoneID": z.zoneID.json, "deleted": .bool(z.deleted)]
            if z.purged { o["purged"] = true }
            return .object(o)
        }
    }
    public var members: [String: JSONValue] { ["syncToken": .string(result.syncToken), "moreComing": .bool(result.moreComing)] }
}

extension CloudKitAPI {
    public func databaseChanges(_ r: DatabaseChangesRequest, as caller: Caller) throws -> DatabaseChangesResponse {
        let (ctx, since) = try openDatabaseChanges(r, caller)
        return DatabaseChangesResponse(result: try ctx.db.changes.database(since: since, limit: limit(r)))
    }

    /// ck's `--all`: every page as one, each zone once, as it last changed.
    public func allDatabaseChanges(_ r: DatabaseChangesRequest, as caller: Caller, while more: () -> Bool = { true }) throws -> DatabaseChangesResponse {
        let (ctx, since) = try openDatabaseChanges(r, caller)
        return DatabaseChangesResponse(result: try ctx.db.changes.allOfDatabase(since: since, limit: limit(r), while: more))
    }

    /// ck's `--all`, streamed: each page handed to `page` as it comes (false: stop); returns
    /// the last.
    public func followDatabaseChanges(_ r: DatabaseChangesRequest, as caller: Caller, _ page: (DatabaseChangesResponse) throws -> Bool) throws -> DatabaseChangesResponse {
        let (ctx, since) = try openDatabaseChanges(r, caller)
        return DatabaseChangesResponse(result: try ctx.db.changes.followDatabase(since: since, limit: limit(r)) { try page(DatabaseChangesResponse(result: $0)) })
    }

    private func limit(_ r: DatabaseChangesRequest) -> Int { min(r.resultsLimit ?? Limits.resultsPerPage, Limits.resultsPerPage) }

    private func openDatabaseChanges(_ r: DatabaseChangesRequest, _ caller: Caller) throws -> (RequestContext, String?) {
        let ctx = try preflight(.changesDatabase, caller)
        return (ctx, try r.syncToken ?? (r.fromBookmark ? ctx.db.bookmarks.token(zone: nil) : nil))
    }
}
