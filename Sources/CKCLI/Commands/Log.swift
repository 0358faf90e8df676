import CKCore

extension HistoryCommands {
    static let log: CommandSpec = CommandSpec(synopsis: "[RECORD] [--zone Z | --all-zones] [--field F] [--since REF] [--until REF] [--user U] [--device D] [--limit N] [--patch] [--reverse]",
        summary: "List the changes of a zone, a record or a field, newest first (like git log)",
        options: [
            OptionSpec("--all-zones", help: "the changes of every zone of the database, newest first"),
            OptionSpec("--field", value: "F", help: "only changes that changed field F"),
            OptionSpec("--since", value: "REF", help: "only changes after this point (\(referenceHelp))"),
            OptionSpec("--until", value: "REF", help: "only changes up to this point"),
            OptionSpec("--user", value: "U", help: "only changes by this user (Apple ID or user record name)"),
            OptionSpec("--limit", value: "N", help: "at most N changes"),
            OptionSpec("--patch", help: "add each change's field-level diff: fields: {F: {old, new}}"),
            OptionSpec("--reverse", help: "oldest first"),
        ],
        details: """
        Prints {"changes": [...]}: each change with seq, timestamp, operation (save or delete),
        recordName, recordType, recordChangeTag, userRecordName, deviceID, zoneID and prev (the
        change that wrote the version it replaced); newest first, like git (--reverse: oldest
        first). --format ndjson prints one change per line, table a line each. The history is the
        zone's own (ck keeps every change whole): reading k changes costs O(k). After 'ck gc' the
        log shows what remains: the changes that wrote the versions current at the compaction
        point, then every later one.
        --device D (the global option, given on the command line) keeps the changes made on
        device D.
        """) { inv in
        let target = try inv.positionals(max: 1, what: "").first
        if inv.args.has("--all-zones") && !inv.globals.zones.isEmpty { throw inv.usageError("--zone and --all-zones exclude each other") }
        let req = LogRequest(recordName: target, zoneName: inv.zoneGiven, allZones: inv.args.has("--all-zones"), field: inv.args.value("--field"),
                             since: try inv.args.value("--since").map(inv.reference), until: try inv.args.value("--until").map(inv.reference),
                             user: inv.args.value("--user"), device: inv.args.value("--device"), limit: try inv.positiveInt("--limit"),
                             patch: inv.args.has("--patch"), reverse: inv.args.has("--reverse"))
        let caller = try inv.caller()
        try inv.printer.stream(listKey: "changes") { emit in
            try inv.api.log(req, as: caller) { emit($0); return true }
        }
        return ExitCode.success
    }
}
