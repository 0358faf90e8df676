import CKCore
import CKJSON
import CKModel

/// What a fetch brought into the tracking state.
public struct FetchReport: Sendable {
    public var requests = 0
    public var pages = 0
    public var records = 0
    public var deletions = 0
    /// Zones fetched (changed, or new to the tracking state).
    public var zones: [RemoteZone] = []
    /// Zones the remote deleted.
    public var deletedZones: [String] = []
    /// Zones whose token had expired and that were fetched again from scratch.
    public var refetched: [String] = []
}

/// Brings a remote's changes into the tracking state only (`ck fetch`), page by page, each
/// page saved with its cursor before the next is asked for — so an interrupted fetch goes on
/// where it stopped, and no page is fetched twice.
///
/// Private and shared databases: `changes/database` from the last token, then `changes/zone`
/// per zone it names, 200 records a page. The public database and the private default zone
/// have no change feed: `records/query` per record type (`types`), all pages.
public struct RemoteFetch {
    public let api: CloudKitAPI
    public let client: WebServicesClient
    public let caller: Caller
    /// Zones to fetch (empty: every zone the database has).
    public var zones: [String] = []
    /// Record types queried where there is no feed.
    public var types: [String] = []
    /// After a whole query scan, records it did not see are taken as deleted remotely.
    public var prune = false
    /// Called after each page (progress).
    public var progress: (FetchReport) -> Void = { _ in }
    public static let pageSize = 200

    public init(api: CloudKitAPI, client: WebServicesClient, caller: Caller) {
        self.api = api
        self.client = client
        self.caller = caller
    }

    var remote: String { client.remote.name }

    public func run() throws -> FetchReport {
        try api.withRemoteOperation(remote, as: caller, waiting: waiting) { try runHoldingLock() }
    }

    func waiting() { client.notice("remote '\(remote)': waiting for another fetch, pull or push of it to finish") }

    /// `run`, for a command that holds the remote's operation lock already.
    func runHoldingLock() throws -> FetchReport {
        var report = FetchReport()
        if caller.scope != .public {
            try fetchFeeds(&report)
        }
        if caller.scope == .public || (caller.scope == .private && wantsZone(ZoneID.defaultZoneName) && !types.isEmpty) {
            try query(RemoteZone(remote: remote, zoneName: ZoneID.defaultZoneName), &report)
        }
        return report
    }

    func wantsZone(_ z: String) -> Bool { zones.isEmpty || zones.contains { $0.sameBytesAs(z) } }

    /// `changes/database`, then each zone it names.
    func fetchFeeds(_ report: inout FetchReport) throws {
        var token = try api.remoteDatabaseToken(remote: remote, as: caller)
        var fromScratch = token == nil
        var changed: [RemoteZone] = []
        var deleted: [RemoteZone] = []
        while true {
            var body: [String: JSONValue] = [:]
            if let t = token { body["syncToken"] = .string(t) }
            let answer: JSONValue
            do {
                answer = try client.call(caller.scope, "changes/database", body: .object(body))
            } catch let e as CloudKitError where token != nil && (e.code == .changeTokenExpired || (e.code == .badRequest && client.lastServerReason?.contains("token") == true)) {
                // An expired token, or one the database no longer knows (a reset): list every
                // zone again; a tracked zone the listing lacks is gone.
                client.notice("remote '\(remote)': the database's change token is no longer valid (\(e.code.rawValue)); listing its zones again")
                token = nil
                fromScratch = true
                changed = []
                deleted = []
                continue
            }
            report.requests += 1
            for z in answer["zones"]?.arrayValue ?? [] {
                guard let name = z["zoneID"]?["zoneName"]?.stringValue, wantsZone(name) else { continue }
                let owner = caller.scope == .shared ? z["zoneID"]?["ownerRecordName"]?.stringValue : nil
                let rz = RemoteZone(remote: remote, zoneName: name, ownerRecordName: owner)
                if z["deleted"]?.boolValue == true || z["purged"]?.boolValue == true { deleted.append(rz) } else if !changed.contains(rz) { changed.append(rz) }
            }
            token = answer["syncToken"]?.stringValue ?? token
            if answer["moreComing"]?.boolValue != true { break }
        }
        for z in try api.trackedZones(remote: remote, as: caller) where !changed.contains(z) && !deleted.contains(z) && wantsZone(z.zoneName) {
            // The private default zone has no feed: it is never listed as changed.
            if z.zoneName.sameBytesAs(ZoneID.defaultZoneName) { continue }
            let tracked = try api.remoteTracking(z, remember: true, as: caller)
            if fromScratch {
                // A whole listing without the zone: it is gone from the remote.
                if tracked.fetched > 0 || tracked.complete { deleted.append(z) }
            } else if !tracked.complete {
                // Zones tracked but never completed (a fetch interrupted before the database
                // token was saved) go on too.
                changed.append(z)
            }
        }
        for z in deleted {
            if caller.scope == .shared { try api.leaveRemoteSharedZone(z, as: caller) } else {
                try api.saveFetched(FetchedPage(complete: true, reset: true), for: z, as: caller)
            }
            report.deletedZones.append(z.zoneName)
        }
        for z in changed { try fetchZone(z, &report) }
        if let t = token { try api.saveRemoteDatabaseToken(t, remote: remote, as: caller) }
    }

    /// `changes/zone` from the zone's token until nothing more is coming.
    func fetchZone(_ z: RemoteZone, _ report: inout FetchReport) throws {
        report.zones.append(z)
        var token = try api.remoteTracking(z, as: caller).syncToken
        while true {
            var zoneID: [String: JSONValue] = ["zoneName": .string(z.zoneName)]
            if let o = z.ownerRecordName { zoneID["ownerRecordName"] = .string(o) }
            var req: [String: JSONValue] = ["zoneID": .object(zoneID), "resultsLimit": .int(Int64(Self.pageSize))]
            if let t = token { req["syncToken"] = .string(t) }
            let answer = try client.call(caller.scope, "changes/zone", body: .object(["zones": .array([.object(req)])]), zone: z.zoneName)
            report.requests += 1
            guard let zone = answer["zones"]?.arrayValue?.first else {
                throw CloudKitError(.internalError, "remote '\(remote)' answered changes/zone for '\(z.zoneName)' with no zone")
            }
            if let answered = zone["zoneID"]?["zoneName"]?.stringValue, !answered.sameBytesAs(z.zoneName) {
                throw CloudKitError(.internalError, "remote '\(remote)' answered changes/zone for '\(z.zoneName)' with zone '\(answered)'")
            }
            if let code = zone["serverErrorCode"]?.stringValue {
                if code == ServerErrorCode.changeTokenExpired.rawValue {
                    client.notice("remote '\(remote)' zone '\(z.zoneName)': the change token expired; fetching the zone again from the start")
                    try api.saveFetched(FetchedPage(reset: true), for: z, as: caller)
                    report.refetched.append(z.zoneName)
                    token = nil
                    continue
                }
                if code == ServerErrorCode.zoneNotFound.rawValue {
                    if caller.scope == .shared { try api.leaveRemoteSharedZone(z, as: caller) } else {
                        try api.saveFetched(FetchedPage(complete: true, reset: true), for: z, as: caller)
                    }
                    report.deletedZones.append(z.zoneName)
                    return
                }
                throw CloudKitError(ServerErrorCode(rawValue: code) ?? .internalError,
                                    "remote '\(remote)' zone '\(z.zoneName)', changes/zone: \(zone["reason"]?.stringValue ?? code)")
            }
            var page = FetchedPage()
            for r in zone["records"]?.arrayValue ?? [] {
                guard let n = r["recordName"]?.stringValue else { continue }
                if r["deleted"]?.boolValue == true { page.deleted.append(n) } else { page.records.append(r) }
            }
            let more = zone["moreComing"]?.boolValue == true
            page.syncToken = zone["syncToken"]?.stringValue
            page.complete = !more
            try api.saveFetched(page, for: z, as: caller)
            report.pages += 1
            report.records += page.records.count
            report.deletions += page.deleted.count
            progress(report)
            token = page.syncToken ?? token
            if !more { return }
        }
    }

    /// `records/query` per record type, from each type's saved continuation marker.
    func query(_ z: RemoteZone, _ report: inout FetchReport) throws {
        report.zones.append(z)
        var state = try api.remoteTracking(z, as: caller)
        // A scan that finished (or never began) starts over, every type from its start ("");
        // one interrupted goes on from each type's marker; a type done is null.
        if state.complete || state.cursor.isEmpty {
            var start: [String: JSONValue] = [:]
            for t in types { start[t] = "" }
            try api.saveFetched(FetchedPage(cursor: start, complete: false, startsScan: true), for: z, as: caller)
            state = try api.remoteTracking(z, as: caller)
        }
        for type in types {
            let saved = state.cursor[type]
            if saved?.isNull == true { continue }
            var marker: JSONValue? = saved?.stringValue == "" ? nil : saved
            while true {
                var body: [String: JSONValue] = [
                    "zoneID": .object(["zoneName": .string(z.zoneName)]), "resultsLimit": .int(Int64(Self.pageSize)),
                    "query": .object(["recordType": .string(type)]),
                ]
                if let m = marker, !m.isNull { body["continuationMarker"] = m }
                let answer: JSONValue
                do {
                    answer = try client.call(caller.scope, "records/query", body: .object(body), zone: z.zoneName)
                } catch var e as CloudKitError where e.code == .badRequest && client.lastServerReason?.contains("queryable") == true {
                    e.reason += "; add to the schema: RECORD TYPE \(type) ( \"___recordID\" REFERENCE QUERYABLE, … ) — an unfiltered query needs recordName queryable"
                    throw e
                }
                report.requests += 1
                var page = FetchedPage(records: (answer["records"]?.arrayValue ?? []).filter { $0["serverErrorCode"] == nil })
                let next = answer["continuationMarker"]
                page.cursor = [type: next ?? .null]
                try api.saveFetched(page, for: z, as: caller)
                report.pages += 1
                report.records += page.records.count
                progress(report)
                guard let n = next, !n.isNull else { break }
                marker = n
            }
        }
        try api.saveFetched(FetchedPage(complete: true), for: z, as: caller)
        if prune { report.deletions += try api.pruneUnseen(z, types: types, as: caller).count }
    }
}

extension String {
    func sameBytesAs(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}
