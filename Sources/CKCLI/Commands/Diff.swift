import CKCore
import CKJSON
import CKModel
import CKRemote

extension HistoryCommands {
    static let diff: CommandSpec = CommandSpec(synopsis: "REF1 [REF2] [--zone Z] [--stat | --name-only] | REMOTE[/ZONE] [--fetch] [--record NAME]",
        summary: "Show the records added, changed and deleted between two points (default: up to now)",
        options: [
            OptionSpec("--stat", help: "only counts: {added, changed, deleted}"),
            OptionSpec("--name-only", help: "records and what happened to them, without their fields"),
            OptionSpec("--fetch", help: "with REMOTE: fetch the remote's changes first (as 'ck fetch')"),
            OptionSpec("--record", value: "NAME", help: "with REMOTE/ZONE: one record's three sides, {recordName, base, remote, local}"),
        ] + RemoteCommands.pacingOptions,
        details: """
        Prints {"changes": [...]}: for each record that differs between REF1 and REF2 (default:
        the newest change), {recordName, recordType, zoneID, status: added|changed|deleted,
        fields: {F: {old, new}}}, zone by zone, by record name. A record changed and changed back
        is not listed. Without --zone, and unless a reference names a zone (ZONE@SEQ, a token),
        every zone of the database is compared (a tag or a time is a point in each; a zone made
        after it counts from empty). REF is \(referenceHelp). Reading k changes costs O(k).

        REMOTE[/ZONE] (a remote's name, 'ck remote list'): the local store against the remote as
        last fetched, offline (--fetch fetches first): old is the remote's value, new the local
        one; added is only here, deleted only there. --record NAME prints one record's base (the
        remote version both sides last agreed on), remote and local versions.
        """) { inv in
        let raws = try inv.positionals(min: 1, max: 2, what: "reference")
        if inv.args.has("--stat") && inv.args.has("--name-only") { throw inv.usageError("--stat and --name-only exclude each other") }
        if raws.count == 1, let remote = try remoteTarget(inv, raws[0]) { return try remoteDiff(inv, remote.entry, zone: remote.zone) }
        for o in ["--fetch", "--record"] where inv.args.has(o) { throw inv.usageError("\(o) applies to a remote: ck diff REMOTE/ZONE \(o)") }
        let refs = try raws.map(inv.reference)
        let output: DiffRequest.Output = inv.args.has("--stat") ? .stat : inv.args.has("--name-only") ? .nameOnly : .full
        inv.print(try inv.api.diff(DiffRequest(from: refs[0], to: refs.count > 1 ? refs[1] : nil, zoneName: inv.zoneGiven, output: output), as: try inv.caller()))
        return ExitCode.success
    }
}

extension HistoryCommands {
    /// `NAME` or `NAME/ZONE` when NAME is a remote of this data directory.
    static func remoteTarget(_ inv: Invocation, _ raw: String) throws -> (entry: RemoteEntry, zone: String?)? {
        let parts = raw.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let r = try inv.api.remotes().first(where: { $0.name == parts[0] }) else { return nil }
        return (r, parts.count > 1 && !parts[1].isEmpty ? parts[1] : nil)
    }

    static func remoteDiff(_ inv: Invocation, _ remote: RemoteEntry, zone: String?) throws -> Int32 {
        try RemoteCommands.running(inv) {
            let caller = try RemoteCommands.caller(inv, remote)
            if inv.args.has("--fetch") {
                let client = try RemoteCommands.open(inv, remote)
                defer { client.close() }
                var f = RemoteFetch(api: inv.api, client: client, caller: caller)
                if let z = zone { f.zones = [z] }
                _ = try f.run()
            }
            let output: DiffRequest.Output = inv.args.has("--stat") ? .stat : inv.args.has("--name-only") ? .nameOnly : .full
            var zones = try inv.api.trackedZones(remote: remote.name, as: caller)
            if let z = zone {
                zones = zones.filter { $0.zoneName == z }
                if zones.isEmpty { zones = [RemoteZone(remote: remote.name, zoneName: z)] }
            }
            if let name = inv.args.value("--record") {
                guard zones.count == 1 else { throw inv.usageError("--record needs one zone: ck diff \(remote.name)/ZONE --record \(name)") }
                inv.print(try inv.api.remoteDiff(zones[0], record: name, as: caller))
                return ExitCode.success
            }
            var items: [JSONValue] = []
            var counts: [String: Int64] = [:]
            for z in zones {
                let d = try inv.api.remoteDiff(z, output: output, as: caller).document
                if output == .stat { for (k, v) in d { counts[k, default: 0] += v.int64Value ?? 0 } } else { items += d["changes"]?.arrayValue ?? [] }
            }
            if output == .stat {
                inv.print(DocumentBody(["added": .int(counts["added"] ?? 0), "changed": .int(counts["changed"] ?? 0), "deleted": .int(counts["deleted"] ?? 0)]))
            } else {
                inv.print(DocumentBody(["changes": .array(items)], listKey: "changes"))
            }
            return ExitCode.success
        }
    }
}
