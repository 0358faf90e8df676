import CKCore

extension RecordCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "[--type T] [--fields a,b] [--at REF]",
        summary: "List every record of a zone (streams; no index needed)",
        options: [OptionSpec("--type", aliases: ["--record-type"], value: "T", help: "only records of this type"), fieldsOption, HistoryReferences.atOption],
        details: "Records come in storage order, which is stable for the same data. Use --format ndjson\nfor one record per line.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let req = ListRecordsRequest(zoneName: inv.zoneGiven, recordType: inv.args.value("--type"), desiredKeys: try desiredKeys(inv),
                                     at: try inv.atReference())
        let caller = try inv.caller()
        // Records are encoded a batch at a time on every core.
        try inv.printer.streamBatches(listKey: "records") { emit in
            try inv.api.listRecords(req, as: caller) { batch in
                emit(batch.count, batch.item)
                return inv.io.writable()
            }
        }
        return ExitCode.success
    }
}
