import CKCore

extension HistoryCommands {
    static let diff: CommandSpec = CommandSpec(synopsis: "REF1 [REF2] [--zone Z] [--stat | --name-only]",
        summary: "Show the records added, changed and deleted between two points (default: up to now)",
        options: [
            OptionSpec("--stat", help: "only counts: {added, changed, deleted}"),
            OptionSpec("--name-only", help: "records and what happened to them, without their fields"),
        ],
        details: """
        Prints {"changes": [...]}: for each record that differs between REF1 and REF2 (default:
        the newest change), {recordName, recordType, zoneID, status: added|changed|deleted,
        fields: {F: {old, new}}}, zone by zone, by record name. A record changed and changed back
        is not listed. Without --zone, and unless a reference names a zone (ZONE@SEQ, a token),
        every zone of the database is compared (a tag or a time is a point in each; a zone made
        after it counts from empty). REF is \(referenceHelp). Reading k changes costs O(k).
        """) { inv in
        let raws = try inv.positionals(min: 1, max: 2, what: "reference")
        if inv.args.has("--stat") && inv.args.has("--name-only") { throw inv.usageError("--stat and --name-only exclude each other") }
        let refs = try raws.map(inv.reference)
        let output: DiffRequest.Output = inv.args.has("--stat") ? .stat : inv.args.has("--name-only") ? .nameOnly : .full
        inv.print(try inv.api.diff(DiffRequest(from: refs[0], to: refs.count > 1 ? refs[1] : nil, zoneName: inv.zoneGiven, output: output), as: try inv.caller()))
        return ExitCode.success
    }
}
