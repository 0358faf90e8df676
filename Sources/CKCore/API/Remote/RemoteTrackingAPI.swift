import CKJSON
import CKModel
import CKStore

/// A zone of a remote, as the tracking state names it. In the shared database a zone is named
/// with its owner (`zone:_owner`), since two owners may share zones of one name.
public struct RemoteZone: Sendable, Equatable {
    public var remote: String
    public var zoneName: String
    public var ownerRecordName: String?

    public init(remote: String, zoneName: String, ownerRecordName: String? = nil) {
        self.remote = remote
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
    }

    var key: String { ownerRecordName.map { zoneName + ":" + $0 } ?? zoneName }
}

/// A page a fetch brought, saved with where to go on from in one append.
public struct FetchedPage: Sendable {
    /// Records as the remote answered them.
    public var records: [JSONValue] = []
    /// Names the remote reported deleted.
    public var deleted: [String] = []
    /// The feed's token after this page (nil: unchanged).
    public var syncToken: String?
    /// Per record type, the query's continuation marker after this page (null: that type is done).
    public var cursor: [String: JSONValue] = [:]
    /// Whether the fetch reached the end.
    public var complete: Bool?
    /// Forget what was fetched before (an expired token, a zone deleted remotely); the base
    /// stays, so that what changed locally since is still known.
    public var reset = false
    /// A query scan of every record type begins (what `pruneUnseen` measures against).
    public var startsScan = false

    public init(records: [JSONValue] = [], deleted: [String] = [], syncToken: String? = nil, cursor: [String: JSONValue] = [:], complete: Bool? = nil, reset: Bool = false,
                startsScan: Bool = false) {
        self.startsScan = startsScan
        self.records = records
        self.deleted = deleted
        self.syncToken = syncToken
        self.cursor = cursor
        self.complete = complete
        self.reset = reset
    }
}

/// Where a zone's tracking state stands.
public struct TrackingSummary: Sendable {
    public var syncToken: String?
    public var cursor: [String: JSONValue]
    public var complete: Bool
    /// Records the remote has, as last fetched.
    public var fetched: Int
    /// Records whose fetched version the local store has not taken yet (fetched ≠ base).
    public var behind: Int
    public var exists: Bool

    /// As kept beside the log (RemoteTrackingLog.saveSummary).
    var kept: JSONValue {
        var o: [String: JSONValue] = ["cursor": .object(cursor), "complete": .bool(complete), "fetched": .int(Int64(fetched)), "behind": .int(Int64(behind))]
        if let t = syncToken { o["syncToken"] = .string(t) }
        return .object(o)
    }

    init(syncToken: String?, cursor: [String: JSONValue], complete: Bool, fetched: Int, behind: Int, exists: Bool) {
        (self.syncToken, self.cursor, self.complete, self.fetched, self.behind, self.exists) = (syncToken, cursor, complete, fetched, behind, exists)
    }

    init?(kept j: JSONValue) {
        guard let cursor = j["cursor"]?.objectValue, let complete = j["complete"]?.boolValue, let fetched = j["fetched"]?.int64Value,
              let behind = j["behind"]?.int64Value else { return nil }
        self.init(syncToken: j["syncToken"]?.stringValue, cursor: cursor, complete: complete, fetched: Int(fetched), behind: Int(behind), exists: true)
    }
}

extension CloudKitAPI {
    /// The tracking log of a remote's zone in the caller's database. The remote must exist.
    func trackingLog(_ z: RemoteZone, _ caller: Caller) throws -> RemoteTrackingLog {
        _ = try remoteList.entry(z.remote)
        let ctx = try preflight(nil, caller, need: .read)
        return RemoteTrackingLog(database: ctx.db.directory, remote: z.remote, zoneName: z.key)
    }

    /// The database's own tracking: the `changes/database` token it reached.
    public func remoteDatabaseToken(remote: String, as caller: Caller) throws -> String? {
        _ = try remoteList.entry(remote)
        let ctx = try preflight(nil, caller, need: .read)
        return try RemoteTrackingLog(database: ctx.db.directory, remote: remote, zoneName: nil).read().syncToken
    }

    /// Saves the `changes/database` token, once every zone it reported is fetched.
    public func saveRemoteDatabaseToken(_ token: String, remote: String, as caller: Caller) throws {
        _ = try remoteList.entry(remote)
        let ctx = try preflight(nil, caller, need: .read)
        var c = RemoteTrackingLog.Change()
        c.syncToken = token
        try RemoteTrackingLog(database: ctx.db.directory, remote: remote, zoneName: nil).append(c)
    }

    /// Where a zone's tracking stands: from the summary kept beside its log when the log is
    /// unchanged since, else from the whole log — and then, with `remember` (a command that
    /// writes the tracking state anyway: fetch, pull), kept as the new summary.
    public func remoteTracking(_ z: RemoteZone, remember: Bool = false, as caller: Caller) throws -> TrackingSummary {
        let log = try trackingLog(z, caller)
        if let kept = log.summary().flatMap(TrackingSummary.init(kept:)) { return kept }
        let s = try log.read()
        let behind = Set(s.fetched.keys).union(s.base.keys).filter(s.differs).count
        let summary = TrackingSummary(syncToken: s.syncToken, cursor: s.cursor, complete: s.complete, fetched: s.fetched.count, behind: behind, exists: log.exists)
        if remember, summary.exists { log.saveSummary(summary.kept) }
        return summary
    }

    /// Saves a fetched page and its cursor in one synced append: after a crash the fetch goes
    /// on from the last page saved.
    public func saveFetched(_ page: FetchedPage, for z: RemoteZone, as caller: Caller) throws {
        var c = RemoteTrackingLog.Change()
        (c.reset, c.keepBase, c.scan) = (page.reset, page.reset, page.startsScan)
        (c.fetched, c.fetchedDeleted) = (page.records, page.deleted)
        (c.syncToken, c.cursor, c.complete) = (page.syncToken, page.cursor, page.complete)
        try trackingLog(z, caller).append(c)
    }

    /// After a whole query scan (`--prune`): the records of `types` it did not see are gone
    /// from the remote, since a query reports no deletions. Answers their names.
    public func pruneUnseen(_ z: RemoteZone, types: [String], as caller: Caller) throws -> [String] {
        let (log, s) = try trackedState(z, caller)
        guard s.complete else { return [] }
        let gone = s.fetched.filter { key, r in
            (s.seen[key] ?? 0) < s.scan && types.contains { $0 == r.recordType }
        }.keys.sorted().map(\.string)
        if !gone.isEmpty {
            var c = RemoteTrackingLog.Change()
            c.fetchedDeleted = gone
            try log.append(c)
        }
        return gone
    }

    /// The zones of a remote this database tracks (by their tracking names).
    public func trackedZones(remote: String, as caller: Caller) throws -> [RemoteZone] {
        _ = try remoteList.entry(remote)
        let ctx = try preflight(nil, caller, need: .read)
        return try RemoteTrackingLog.zoneNames(database: ctx.db.directory, remote: remote).map { key in
            if caller.scope == .shared, let colon = key.lastIndex(of: ":") {
                return RemoteZone(remote: remote, zoneName: String(key[..<colon]), ownerRecordName: String(key[key.index(after: colon)...]))
            }
            return RemoteZone(remote: remote, zoneName: key)
        }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    func trackedState(_ z: RemoteZone, _ caller: Caller) throws -> (RemoteTrackingLog, TrackedZone) {
        let log = try trackingLog(z, caller)
        return (log, try log.read())
    }
}

extension CloudKitAPI {
    /// The names of the caller's zones, default zone first: what a push looks through. (ck's
    /// own: no endpoint, so no fault of zones/list fails a push.)
    public func zoneNames(as caller: Caller) throws -> [String] {
        let ctx = try preflight(nil, caller, need: .read)
        return try ctx.db.listZones().map(\.zoneID.zoneName)
    }
}

extension CloudKitAPI {
    /// Runs a fetch, pull or push of `remote` into the caller's database holding its operation
    /// lock (RemoteOperationLock); `waiting` is told when another command holds it.
    public func withRemoteOperation<T>(_ remote: String, as caller: Caller, waiting: () -> Void, _ body: () throws -> T) throws -> T {
        _ = try remoteList.entry(remote)
        let ctx = try preflight(nil, caller, need: .read)
        let lock = try RemoteOperationLock.hold(database: ctx.db.directory, remote: remote, waiting: waiting)
        defer { lock.unlock() }
        // Removed or renamed while this waited (they hold the lock while they do it).
        _ = try remoteList.entry(remote)
        return try body()
    }
}
