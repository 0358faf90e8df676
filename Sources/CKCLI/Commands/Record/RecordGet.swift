import CKCore
import CKModel

extension RecordCommands {
    static let get: CommandSpec = CommandSpec(synopsis: "NAME… | - [--name NAME]… [--fields a,b] [--asset FIELD] [--at REF]",
        summary: "Fetch records by name",
        options: [nameOption, fieldsOption, OptionSpec("--asset", value: "FIELD", help: "write the bytes of this ASSET field of one record to stdout"),
                  HistoryReferences.atOption],
        details: """
        Prints the records/lookup response {"records": [...]}: a record, or an error dictionary,
        per name, in order; exit 9 when any is missing. With one name, a missing record is the
        command's error (NOT_FOUND, exit 3). --format ndjson prints one record per line.
        Names are taken as CloudKit takes them ('/', '+', dots are ordinary characters); a
        name that starts with '-' goes in --name (ck record get --name ----Root-Folder----).
        '-' reads the names from stdin, one per line (ck record list --format ndjson | jq -r
        .recordName | ck record get -).
        With --asset FIELD, stdout is the bytes of that asset of one record, not JSON, and
        --format does not change them (redirect them to a file).
        """) { inv in
        let names = try givenNames(inv)
        if let field = inv.args.value("--asset") {
            guard names.count == 1 else { throw inv.usageError("--asset takes exactly one record name") }
            try Names.validateFieldName(field)
            let req = AssetDownloadRequest(recordName: names[0], fieldName: field, zoneName: inv.zoneGiven, at: try inv.atReference())
            inv.io.writeOutBytes(try inv.api.downloadAsset(req, as: try inv.caller()))
            return ExitCode.success
        }
        let req = LookupRecordsRequest(recordNames: names, zoneName: inv.zoneGiven, desiredKeys: try desiredKeys(inv), at: try inv.atReference())
        let response = try inv.api.lookupRecords(req, as: try inv.caller())
        if names.count == 1, let e = response.results[0].error { throw e }
        inv.print(response)
        return inv.batchExit(response.results, noun: "records")
    }
}
