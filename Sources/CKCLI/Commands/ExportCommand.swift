import CKCore

/// `ck export`: a database's records as NDJSON, one Web Services record per line, for
/// fixtures, backups and bulk loads (`ck import` reads them back).
enum ExportCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[--zone Z] [--at REF]",
        summary: "Print every record of a database as NDJSON (one record per line)",
        options: [HistoryReferences.atOption],
        details: """
        Every zone of the database (--db), or only --zone Z, zone by zone in storage order;
        each line is a full Web Services record with its zoneID, which 'ck import' reads back.
        Always NDJSON: --format does not change it. --at REF exports the records as they were
        then (a tag or a time is a point in every zone; a zone made after it exports nothing).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        try inv.api.exportRecords(ExportRequest(zoneName: inv.zoneGiven, at: try inv.atReference()), as: try inv.caller()) { line in
            inv.io.writeOut(line)
            return inv.io.writable()
        }
        return ExitCode.success
    }
}
