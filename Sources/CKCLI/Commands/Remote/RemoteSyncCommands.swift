import CKCore
import CKJSON
import CKModel
import CKRemote

extension RemoteCommands {
    static let typesOption = OptionSpec("--types", value: "T,…", help: "the record types to query where there is no change feed (the public database, the private default zone)")
    static let pruneOption = OptionSpec("--prune", help: "where there is no change feed: a record a whole query scan did not see was deleted remotely (a query reports no deletions)")

    static let fetch: CommandSpec = CommandSpec(synopsis: "[NAME] [--zone Z]… [--types T,…]", summary: "Bring a remote's changes into the tracking state only",
        options: [typesOption, pruneOption] + pacingOptions,
        details: """
        Fetches what changed on the remote since the last fetch — changes/database, then
        changes/zone per zone, 200 records a page (private and shared); records/query per type
        (--types) where there is no feed — and saves every page with its cursor as it arrives,
        so an interrupted fetch goes on where it stopped. The local records do not change: see
        'ck pull'. Prints {fetched:{requests, pages, records, deletions, refetched, deletedZones}}.
        """, severalZones: true) { inv in
        try running(inv) {
            let remote = try RemoteCommands.remote(inv, try inv.positionals(max: 1, what: "remote name").first)
            let client = try open(inv, remote)
            defer { client.close() }
            let f = try fetch(inv, client, remote)
            let r = try f.run()
            endProgress(inv)
            inv.print(DocumentBody(PullReport(fetch: r).json.objectValue?.filter { $0.key == "fetched" } ?? [:]))
            return ExitCode.success
        }
    }

    static let pull: CommandSpec = CommandSpec(synopsis: "[NAME] [--zone Z]… [--theirs | --ours] [--types T,…]", summary: "Fetch a remote's changes and merge them into the local store",
        options: [
            OptionSpec("--theirs", help: "a record changed on both sides takes the remote's version"),
            OptionSpec("--ours", help: "a record changed on both sides keeps the local version (the next push sends it)"),
            typesOption, pruneOption,
        ] + pacingOptions,
        details: """
        Fetches (as 'ck fetch'), then merges each zone by the three-way rule against the base
        (the remote version the local store last agreed with): a record changed only remotely is
        saved or deleted locally; one changed on both sides is a conflict, listed and left as
        it is on both sides unless --theirs or --ours decides. The local writes enter the
        history like any other, from device remote:NAME ('ck log' shows them). An expired
        change token refetches that zone from the start, with a notice. Prints the fetch and,
        per zone, {zoneName, saved, deleted, conflicts}; exits 4 when conflicts remain.
        """, severalZones: true) { inv in
        try running(inv) {
            if inv.args.has("--theirs") && inv.args.has("--ours") { throw inv.usageError("--theirs and --ours decide the same thing: choose one") }
            let remote = try RemoteCommands.remote(inv, try inv.positionals(max: 1, what: "remote name").first)
            let client = try open(inv, remote)
            defer { client.close() }
            let f = try fetch(inv, client, remote)
            var pull = RemotePull(fetch: f)
            pull.strategy = inv.args.has("--theirs") ? .theirs : inv.args.has("--ours") ? .ours : .none
            let r = try pull.run()
            endProgress(inv)
            inv.print(DocumentBody(r.json.objectValue ?? [:]))
            if r.conflicts > 0 {
                inv.io.writeErr("ck: \(r.conflicts) record\(r.conflicts == 1 ? "" : "s") changed on both sides; see 'ck diff \(remote.name)/ZONE', then 'ck pull --theirs' or 'ck pull --ours'\n")
                return ExitCode.conflict
            }
            return r.failures > 0 ? ExitCode.partialFailure : ExitCode.success
        }
    }

    static let push: CommandSpec = CommandSpec(synopsis: "[NAME] [--zone Z]… [--force] [--dry-run] [--yes]", summary: "Send local changes made since the base to a remote",
        options: [
            OptionSpec("--force", help: "send forceUpdate and forceDelete: overwrite the remote's changes"),
            OptionSpec("--dry-run", help: "print the operations it would send, and send nothing"),
            OptionSpec("--yes", help: "confirm a push to a production remote"),
        ] + pacingOptions,
        details: """
        Sends each zone's local changes since the base: a new record as create, a changed one as
        update with the base's change tag, a deleted one as delete with it; 200 operations a
        request, atomic in custom zones; a zone the remote lacks is created first. CONFLICT and
        EXISTS are collected per record, never retried; a record whose remote version moved
        since the base (as last fetched) is not sent ("behind": pull first). Prints per zone
        {zoneName, saved, deleted, failures, behind}; exits 4 on a conflict.
        """, severalZones: true) { inv in
        try running(inv) {
            let remote = try RemoteCommands.remote(inv, try inv.positionals(max: 1, what: "remote name").first)
            let dry = inv.args.has("--dry-run")
            if !dry { try confirmProduction(inv, remote, "a push") }
            let client = try open(inv, remote)
            defer { client.close() }
            let local = try caller(inv, remote)
            var push = RemotePush(api: inv.api, client: client, caller: local)
            push.zones = inv.globals.zones
            push.force = inv.args.has("--force")
            push.dryRun = dry
            let zones = try inv.api.zoneNames(as: local)
            let r = try push.run(localZones: zones)
            inv.print(DocumentBody(r.json(dryRun: dry).objectValue ?? [:]))
            if r.zones.contains(where: { $0.outcome.failures.contains { $0.code == .conflict || $0.code == .exists } || !$0.plan.behind.isEmpty }) {
                return ExitCode.conflict
            }
            return r.failures > 0 ? ExitCode.partialFailure : ExitCode.success
        }
    }

    /// The fetch `ck fetch` and `ck pull` make: the zones (--zone), record types (--types),
    /// --prune and progress the command line gives.
    static func fetch(_ inv: Invocation, _ client: WebServicesClient, _ remote: RemoteEntry) throws -> RemoteFetch {
        var f = RemoteFetch(api: inv.api, client: client, caller: try caller(inv, remote))
        f.zones = inv.globals.zones
        f.types = types(inv)
        f.prune = inv.args.has("--prune")
        f.progress = progress(inv, client)
        return f
    }

    static func types(_ inv: Invocation) -> [String] {
        inv.args.values("--types").flatMap { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
    }
}
