import CKCore
import CKJSON
import CKModel

/// What a pull did: the fetch, then each zone's merge.
public struct PullReport: Sendable {
    public var fetch: FetchReport
    public var merges: [(zone: RemoteZone, report: MergeReport)] = []
    public var conflicts: Int { merges.reduce(0) { $0 + $1.report.conflicts.count } }
    public var failures: Int { merges.reduce(0) { $0 + $1.report.failures.count } }

    public init(fetch: FetchReport) { self.fetch = fetch }

    /// `{fetched:{requests,pages,records,deletions}, zones:[{zoneName, saved, deleted, conflicts, failures}]}`.
    public var json: JSONValue {
        .object([
            "fetched": .object(["requests": .int(Int64(fetch.requests)), "pages": .int(Int64(fetch.pages)), "records": .int(Int64(fetch.records)),
                                "deletions": .int(Int64(fetch.deletions)), "refetched": .array(fetch.refetched.map { .string($0) }),
                                "deletedZones": .array(fetch.deletedZones.map { .string($0) })]),
            "zones": .array(merges.map { m in
                var o: [String: JSONValue] = ["zoneName": .string(m.zone.zoneName), "saved": .int(Int64(m.report.saved.count)),
                                              "deleted": .int(Int64(m.report.deleted.count)),
                                              "conflicts": .array(m.report.conflicts.map { .string($0) })]
                if let owner = m.zone.ownerRecordName { o["ownerRecordName"] = .string(owner) }
                if !m.report.failures.isEmpty { o["failures"] = .array(m.report.failures.map { $0.envelope() }) }
                return .object(o)
            }),
        ])
    }
}

/// `ck pull`: fetch, then merge every zone fetched into the local store by the three-way rule.
public struct RemotePull {
    public var fetch: RemoteFetch
    public var strategy: MergeStrategy = .none

    public init(fetch: RemoteFetch) { self.fetch = fetch }

    public func run() throws -> PullReport {
        let fetched = try fetch.run()
        var report = PullReport(fetch: fetched)
        let client = fetch.client
        var zones = try fetch.api.trackedZones(remote: client.remote.name, as: fetch.caller).filter { fetch.wantsZone($0.zoneName) }
        for z in fetched.zones where !zones.contains(z) { zones.append(z) }
        for z in zones {
            let m = try fetch.api.mergeRemote(z, strategy: strategy, fetchAsset: { url, _ in
                try client.download(url, limit: Int(Limits.assetBytes))
            }, as: fetch.caller)
            report.merges.append((z, m))
        }
        return report
    }
}

/// What a push did per zone.
public struct PushReport: Sendable {
    public var zones: [(zone: RemoteZone, plan: PushPlan, outcome: PushOutcome)] = []
    public var failures: Int { zones.reduce(0) { $0 + $1.outcome.failures.count + $1.plan.behind.count } }

    public func json(dryRun: Bool) -> JSONValue {
        .object(["dryRun": .bool(dryRun), "zones": .array(zones.map { z in
            var o: [String: JSONValue] = ["zoneName": .string(z.zone.zoneName), "behind": .array(z.plan.behind.map { .string($0) })]
            if dryRun {
                o["operations"] = .array(z.plan.operations)
            } else {
                o["saved"] = .array(z.outcome.saved.map { .string($0) })
                o["deleted"] = .array(z.outcome.deleted.map { .string($0) })
                o["failures"] = .array(z.outcome.failures.map { $0.envelope() })
            }
            return .object(o)
        })])
    }
}

/// `ck push`: each zone's local changes since the base, in records/modify batches of 200
/// (atomic in custom zones), with the base's change tags; CONFLICT and EXISTS are collected,
/// never retried. A zone the remote lacks is created first.
public struct RemotePush {
    public let api: CloudKitAPI
    public let client: WebServicesClient
    public let caller: Caller
    public var zones: [String] = []
    public var force = false
    public var dryRun = false

    public init(api: CloudKitAPI, client: WebServicesClient, caller: Caller) {
        self.api = api
        self.client = client
        self.caller = caller
    }

    public func run(localZones: [String]) throws -> PushReport {
        var report = PushReport()
        let remote = client.remote.name
        var targets = try api.trackedZones(remote: remote, as: caller)
        for z in localZones where !targets.contains(where: { $0.zoneName.sameBytesAs(z) && $0.ownerRecordName == nil }) {
            targets.append(RemoteZone(remote: remote, zoneName: z))
        }
        if !zones.isEmpty { targets = targets.filter { t in zones.contains { $0.sameBytesAs(t.zoneName) } } }
        for z in targets {
            let plan = try api.pushPlan(z, force: force, as: caller)
            var outcome = PushOutcome()
            if !dryRun, !plan.operations.isEmpty {
                let custom = !z.zoneName.sameBytesAs(ZoneID.defaultZoneName)
                if custom, caller.scope == .private, try !api.remoteTracking(z, as: caller).exists {
                    _ = try client.call(caller.scope, "zones/modify", body: .object(["operations": .array([.object([
                        "operationType": "create", "zone": .object(["zoneID": .object(["zoneName": .string(z.zoneName)])]),
                    ])])]), zone: z.zoneName)
                }
                var start = 0
                while start < plan.operations.count {
                    let batch = Array(plan.operations[start..<min(start + RemoteFetch.pageSize, plan.operations.count)])
                    start += batch.count
                    var zoneID: [String: JSONValue] = ["zoneName": .string(z.zoneName)]
                    if let o = z.ownerRecordName { zoneID["ownerRecordName"] = .string(o) }
                    let answer = try client.call(caller.scope, "records/modify", body: .object([
                        "operations": .array(batch), "zoneID": .object(zoneID), "atomic": .bool(custom),
                    ]), zone: z.zoneName)
                    let done = try api.recordPushed(z, sent: batch, answers: answer["records"]?.arrayValue ?? [], as: caller)
                    outcome.saved += done.saved
                    outcome.deleted += done.deleted
                    outcome.failures += done.failures.map { e in
                        var e = e
                        e.reason = "remote '\(remote)' zone '\(z.zoneName)': \(e.reason)"
                        if e.code == .conflict || e.code == .exists, let n = e.recordName {
                            e.reason += "; see both sides: ck diff \(remote)/\(z.zoneName) --record \(n)"
                        }
                        return e
                    }
                }
            }
            if !plan.operations.isEmpty || !plan.behind.isEmpty { report.zones.append((z, plan, outcome)) }
        }
        return report
    }
}
