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
        try fetch.api.withRemoteOperation(fetch.remote, as: fetch.caller, waiting: fetch.waiting) { try runHoldingLock() }
    }

    func runHoldingLock() throws -> PullReport {
        let fetched = try fetch.runHoldingLock()
        var report = PullReport(fetch: fetched)
        let client = fetch.client
        var zones = try fetch.api.trackedZones(remote: client.remote.name, as: fetch.caller).filter { fetch.wantsZone($0.zoneName) }
        for z in fetched.zones where !zones.contains(z) { zones.append(z) }
        for z in zones {
            let m = try fetch.api.mergeRemote(z, strategy: strategy, fetchAsset: { url, _ in
                try client.download(url, limit: Int(Limits.assetBytes))
            }, remoteUser: { try client.callerRecordName() }, as: fetch.caller)
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
        try api.withRemoteOperation(client.remote.name, as: caller, waiting: {
            client.notice("remote '\(client.remote.name)': waiting for another fetch, pull or push of it to finish")
        }) { try runHoldingLock(localZones: localZones) }
    }

    func runHoldingLock(localZones: [String]) throws -> PushReport {
        var report = PushReport()
        let remote = client.remote.name
        var targets = try api.trackedZones(remote: remote, as: caller)
        // A participant makes no zones: in the shared database only the zones fetched go back.
        for z in localZones where caller.scope != .shared && !targets.contains(where: { $0.zoneName.sameBytesAs(z) && $0.ownerRecordName == nil }) {
            targets.append(RemoteZone(remote: remote, zoneName: z))
        }
        if !zones.isEmpty { targets = targets.filter { t in zones.contains { $0.sameBytesAs(t.zoneName) } } }
        for z in targets {
            let plan = try api.pushPlan(z, force: force, as: caller)
            var outcome = PushOutcome()
            if !dryRun, !plan.operations.isEmpty {
                let custom = !z.zoneName.sameBytesAs(ZoneID.defaultZoneName)
                let createZone = {
                    _ = try client.call(caller.scope, "zones/modify", body: .object(["operations": .array([.object([
                        "operationType": "create", "zone": .object(["zoneID": .object(["zoneName": .string(z.zoneName)])]),
                    ])])]), zone: z.zoneName)
                }
                if custom, caller.scope == .private, try !api.remoteTracking(z, as: caller).exists { try createZone() }
                var start = 0
                while start < plan.operations.count {
                    let planned = Array(plan.operations[start..<min(start + RemoteFetch.pageSize, plan.operations.count)])
                    let batch = try uploadingAssets(planned, zone: z)
                    start += batch.count
                    var zoneID: [String: JSONValue] = ["zoneName": .string(z.zoneName)]
                    if let o = z.ownerRecordName { zoneID["ownerRecordName"] = .string(o) }
                    let body: JSONValue = .object(["operations": .array(batch), "zoneID": .object(zoneID), "atomic": .bool(custom)])
                    let answer: JSONValue
                    do {
                        answer = try client.call(caller.scope, "records/modify", body: body, zone: z.zoneName)
                    } catch let e as CloudKitError where e.code == .zoneNotFound && custom && caller.scope == .private {
                        // The zone went from the remote (deleted, or the environment reset): made anew.
                        try createZone()
                        answer = try client.call(caller.scope, "records/modify", body: body, zone: z.zoneName)
                    }
                    let done = try api.recordPushed(z, sent: batch, answers: answer["records"]?.arrayValue ?? [], planned: planned, as: caller)
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

    /// Asset fields held here go as CloudKit takes them: `assets/upload` for an upload URL per
    /// field, the bytes posted there, and the upload's answer (`singleFile`, with its receipt)
    /// as the field's value. An asset whose bytes are on the service already (a downloadURL
    /// over https) goes as it is.
    func uploadingAssets(_ ops: [JSONValue], zone z: RemoteZone) throws -> [JSONValue] {
        var wanted: [(op: Int, field: String, name: String, type: String)] = []
        for (i, op) in ops.enumerated() {
            guard let r = op["record"], let name = r["recordName"]?.stringValue else { continue }
            for (field, f) in r["fields"]?.objectValue ?? [:] where f["type"]?.stringValue == "ASSETID" {
                if let url = f["value"]?["downloadURL"]?.stringValue, url.hasPrefix("https://") { continue }
                wanted.append((i, field, name, r["recordType"]?.stringValue ?? ""))
            }
        }
        if wanted.isEmpty { return ops }
        var out = ops
        var zoneID: [String: JSONValue] = ["zoneName": .string(z.zoneName)]
        if let o = z.ownerRecordName { zoneID["ownerRecordName"] = .string(o) }
        var start = 0
        while start < wanted.count {
            let chunk = Array(wanted[start..<min(start + RemoteFetch.pageSize, wanted.count)])
            start += chunk.count
            let answer = try client.call(caller.scope, "assets/upload", body: .object([
                "zoneID": .object(zoneID),
                "tokens": .array(chunk.map { .object(["recordName": .string($0.name), "recordType": .string($0.type), "fieldName": .string($0.field)]) }),
            ]), zone: z.zoneName)
            let tokens = answer["tokens"]?.arrayValue ?? []
            guard tokens.count == chunk.count else {
                throw CloudKitError(.internalError, "remote '\(client.remote.name)' answered assets/upload with \(tokens.count) upload URLs for \(chunk.count) assets")
            }
            for (w, token) in zip(chunk, tokens) {
                guard let url = token["url"]?.stringValue else {
                    throw CloudKitError(.internalError, "remote '\(client.remote.name)' gave no upload URL for field '\(w.field)' of record '\(w.name)'")
                }
                let bytes = try api.assetBytesForPush(recordName: w.name, fieldName: w.field, zoneName: z.zoneName, as: caller)
                let uploaded = try client.upload(url, bytes: bytes)
                guard let file = uploaded["singleFile"] else {
                    throw CloudKitError(.internalError, "remote '\(client.remote.name)' answered an upload without singleFile")
                }
                guard var op = out[w.op].objectValue, var r = op["record"]?.objectValue, var fields = r["fields"]?.objectValue else { continue }
                fields[w.field] = .object(["type": "ASSETID", "value": file])
                r["fields"] = .object(fields)
                op["record"] = .object(r)
                out[w.op] = .object(op)
            }
        }
        return out
    }
}
