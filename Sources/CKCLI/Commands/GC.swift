import CKCore

extension HistoryCommands {
    static let gc: CommandSpec = CommandSpec(synopsis: "[--zone Z] [--keep N | --keep-since REF]",
        summary: "Compact a zone's history: older tokens then CHANGE_TOKEN_EXPIRED, as CloudKit's do",
        options: [
            OptionSpec("--keep", value: "N", help: "keep the last N changes whole (default 0: only the current state)"),
            OptionSpec("--keep-since", value: "REF", help: "keep every change after this point (\(referenceHelp))"),
        ],
        details: """
        Drops the changes before the kept ones, except those that wrote a version still current
        then (so 'zone changes --from-start', 'ck export' and 'ck fsck' see every record). A
        change token, bookmark or reference older than what remains is then CHANGE_TOKEN_EXPIRED
        (exit 7) — the client refetches from scratch, as CloudKit's change-token tutorial says
        — while tokens from the kept part (and the head's) keep working. Sequence numbers and
        change tags never change. Prints {zoneID, retainedFrom, head, dropped, kept,
        logBytesBefore, logBytesAfter}: the first change kept whole, the newest, how many
        changes went, how many older ones stay as the compacted state, and the log's size.
        Crash safe: the new files are written aside and switched in under the zone's lock.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        if inv.args.value("--keep") != nil && inv.args.value("--keep-since") != nil { throw inv.usageError("--keep and --keep-since exclude each other") }
        var keep: Int64 = 0
        if let raw = inv.args.value("--keep") {
            guard let n = Int64(raw), n >= 0 else { throw inv.usageError("--keep must be a number of changes (0 or more), got '\(raw)'") }
            keep = n
        }
        let req = GCRequest(zoneName: inv.zoneGiven, keep: keep, keepSince: try inv.args.value("--keep-since").map(inv.reference))
        inv.print(try inv.api.compactHistory(req, as: try inv.caller()))
        return ExitCode.success
    }
}
