import CKCore

extension RecordCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "NAME… | - [--name NAME]… [--tag TAG | --force] [--if-exists]",
        summary: "Delete records (cascading DELETE_SELF references)",
        options: [
            nameOption,
            OptionSpec("--tag", value: "TAG", help: "delete only if TAG is the current recordChangeTag, else CONFLICT (one name)"),
            OptionSpec("--force", help: "forceDelete: no tag check (the default without --tag)"),
            OptionSpec("--if-exists", help: "a record that is not there counts as deleted (exit 0), as rm -f"),
        ],
        details: """
        Prints the records/modify response {"records": [...]}: a tombstone {recordName, deleted:
        true} (or an error dictionary) per name, in order, then a tombstone for each record the
        deletions removed through DELETE_SELF references (which CloudKit deletes without
        listing them). A record still referenced with VALIDATE cannot be deleted
        (VALIDATING_REFERENCE_ERROR). '-' reads the names from stdin, one per line.
        Several names go in one request per 200 (atomic in a custom zone, as CloudKit's
        default); with one name, its failure is the command's error, else exit 9 when any
        fails. --if-exists leaves out names that are not there.
        """) { inv in
        let names = try givenNames(inv)
        if inv.args.has("--force") && inv.args.value("--tag") != nil { throw inv.usageError("--tag and --force exclude each other") }
        if inv.args.value("--tag") != nil && names.count != 1 { throw inv.usageError("--tag goes with one record name") }
        let req = DeleteRecordsRequest(recordNames: names, zoneName: inv.globals.zone, recordChangeTag: inv.args.value("--tag"),
                                       ifExists: inv.args.has("--if-exists"))
        let response = try inv.api.deleteRecords(req, as: try inv.caller())
        if names.count == 1, response.results.count == 1, let e = response.results[0].error { throw e }
        inv.print(response)
        return inv.batchExit(response.results, noun: "records")
    }
}
