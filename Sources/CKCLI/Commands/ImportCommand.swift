import CKCore
import CKModel

/// `ck import`: records from NDJSON (or a JSON array) into their zones, in records/modify
/// batches, reported as each batch commits.
enum ImportCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[FILE] [--batch N]",
        summary: "Load records from NDJSON (or a JSON array), replacing records of the same name",
        options: [OptionSpec("--batch", value: "N", help: "records per committed batch [default and maximum: 200]")],
        details: """
        Reads Web Services records from FILE or stdin: NDJSON, one record per line (what
        'ck export' prints), or one JSON array of records. Each record goes to the zone its
        zoneID names (else --zone); custom zones of the private database are created as needed.
        All the input is checked before anything is written, so malformed input changes
        nothing. A record identical to the one stored (same type, fields and parent) is left as
        it is: no new change, same tag, so re-importing an export is free. Progress (records/s,
        done/total, ETA) goes to stderr when it is a terminal, then a one-line summary; -q for
        none. Records are saved with forceReplace in batches of up to 200 and reported as
        each batch commits: the records/modify response {"records": [...]}, streamed, one item
        per record in input order, {recordName, recordChangeTag, zoneID} or an error
        dictionary (with --format ndjson, one line each). Exit 9 when any record failed.
        """) { inv in
        let files = try inv.positionals(max: 1, what: "")
        let batchSize = try inv.positiveInt("--batch", max: Limits.operationsPerBatch) ?? Limits.operationsPerBatch
        let bytes: [UInt8]
        if let f = files.first {
            let path = f.hasPrefix("/") ? f : inv.io.currentDirectory + "/" + f
            bytes = try CloudKitAPI.readUserFile(path, shownAs: f)
        } else {
            bytes = inv.readAllStdin(what: "records to import (NDJSON or a JSON document)")
        }
        let session = try inv.api.importSession(ImportRequest(input: bytes, defaultZone: inv.globals.zone, batchSize: batchSize), as: try inv.caller())
        let progress = ImportProgress(io: inv.io, total: session.count, quiet: inv.globals.quiet)
        var summary: ImportSummary?
        try inv.printer.streamBatches(listKey: "records") { emit in
            var done = 0
            summary = try session.run { batch in
                // The batch's results are encoded together (on every core when there are many).
                let items = batch.items
                emit(items.count) { items[$0] }
                _ = inv.io.flush()
                done += items.count
                progress.update(done: done)
            }
        }
        guard let s = summary else { return ExitCode.success }
        progress.finish(done: s.total, unchanged: s.unchanged, failed: s.failures.count)
        return inv.batchExit(s.failures.map(OperationResult.failed), total: s.total, noun: "records")
    }
}
