import CKCore

extension RecordCommands {
    static let get: Command = Command(["record", "get"], synopsis: "NAME… | - [--name NAME]… [--fields a,b] [--asset FIELD] [--at REF]",
        summary: "Fetch records by name", endpoint: "records/lookup",
        options: [nameOption, fieldsOption, OptionSpec("--asset", value: "FIELD", help: "write the bytes of this ASSET field of one record to stdout"),
                  HistoryCommands.atOption],
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
        let keys = try desiredKeys(inv)
        let db = try inv.database()
        if let field = inv.args.value("--asset") {
            guard names.count == 1 else { throw inv.usageError("--asset takes exactly one record name") }
            try Names.validateFieldName(field)
            let r = try HistoryCommands.lookup(inv, db, names)[0]
            if let e = r.error { throw e }
            guard case .saved(let rec) = r, let f = rec.fields[field] else {
                throw CloudKitError(.notFound, "record '\(names[0])' has no field '\(field)'", recordName: names[0])
            }
            guard f.type == FieldType(.asset), let sum = f.value["fileChecksum"]?.stringValue else {
                throw CloudKitError(.badRequest, "field '\(field)' of record '\(names[0])' is \(f.type), not an ASSETID", recordName: names[0])
            }
            if AssetValue.isRemote(f.value) {
                throw CloudKitError(.notFound, "the bytes of asset field '\(field)' of record '\(names[0])' are not in this data directory: the record was loaded from a server response and its downloadURL points there (\(Names.describe(f.value["downloadURL"]?.stringValue ?? "")))", recordName: names[0])
            }
            guard let bytes = try db.assets.read(checksum: sum) else {
                throw CloudKitError.internalError("asset \(sum) of record '\(names[0])' is missing from the store (run 'ck fsck')")
            }
            inv.io.writeOutBytes(bytes)
            return ExitCode.success
        }
        let results = try HistoryCommands.lookup(inv, db, names)
        if names.count == 1, let e = results[0].error { throw e }
        inv.emit(["records": .array(results.map { inv.resultJSON($0, .lookup, desiredKeys: keys) })], listKey: "records")
        return inv.batchExit(results, noun: "records")
    }

    static let delete: Command = Command(["record", "delete"], synopsis: "NAME… | - [--name NAME]… [--tag TAG | --force] [--if-exists]",
        summary: "Delete records (cascading DELETE_SELF references)", endpoint: "records/modify",
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
        Several names go in one request per 400 (atomic in a custom zone, as CloudKit's
        default); with one name, its failure is the command's error, else exit 9 when any
        fails. --if-exists leaves out names that are not there.
        """) { inv in
        var names = try givenNames(inv)
        if inv.args.has("--force") && inv.args.value("--tag") != nil { throw inv.usageError("--tag and --force exclude each other") }
        if inv.args.value("--tag") != nil && names.count != 1 { throw inv.usageError("--tag goes with one record name") }
        var seen = Set<NameKey>()
        names = names.filter { seen.insert(NameKey($0)).inserted }
        let db = try inv.database()
        if inv.args.has("--if-exists") {
            // Only what is there: a missing name must not fail an atomic batch.
            names = try zip(names, db.lookup(zone: inv.globals.zone, recordNames: names)).compactMap { n, r in
                if let e = r.error, e.code == .notFound { return nil }
                return n
            }
        }
        var results: [OperationResult] = []
        var start = 0
        while start < names.count {
            let chunk = names[start..<min(start + Limits.operationsPerBatch, names.count)]
            start += chunk.count
            let ops = chunk.map { RecordOperation(type: inv.args.value("--tag") == nil ? .forceDelete : .delete, recordName: $0,
                                                  recordChangeTag: inv.args.value("--tag")) }
            results += try db.modify(zone: inv.globals.zone, operations: Array(ops))
        }
        if inv.args.has("--if-exists") {
            // Deleted meanwhile, or by a cascade of an earlier name: gone either way.
            results = results.filter { $0.error?.code != .notFound }
        }
        if names.count == 1, results.count == 1, let e = results[0].error { throw e }
        var cascaded: [JSONValue] = []
        for r in results { if case .deleted(_, _, let more) = r { cascaded += more.map { Record.tombstone(recordName: $0, zoneID: nil) } } }
        inv.emit(["records": .array(results.map { inv.resultJSON($0, .modify) } + cascaded)], listKey: "records")
        return inv.batchExit(results, noun: "records")
    }

    static let list: Command = Command(["record", "list"], synopsis: "[--type T] [--fields a,b] [--at REF]",
        summary: "List every record of a zone (streams; no index needed)", endpoint: "records/query",
        options: [OptionSpec("--type", aliases: ["--record-type"], value: "T", help: "only records of this type"), fieldsOption, HistoryCommands.atOption],
        details: "Records come in storage order, which is stable for the same data. Use --format ndjson\nfor one record per line.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let type = inv.args.value("--type")
        if let t = type { try Names.validateRecordType(t) }
        let keys = try desiredKeys(inv)
        let db = try inv.database()
        let z = try db.zone(try HistoryCommands.atZone(inv, db))
        let style = inv.style
        // Records are encoded a batch at a time on every core.
        try inv.printer.streamBatches(listKey: "records") { batch in
            try withoutActuallyEscaping(batch) { batch in
                var pending: [Record] = []
                func flush() {
                    let records = pending
                    pending = []
                    batch(records.count) { records[$0].encodableResponse(style, desiredKeys: keys) }
                }
                try HistoryCommands.forEachRecord(inv, db, z) { r in
                    if (type == nil || r.recordType == type), try db.canRead(r) { pending.append(r) }
                    if pending.count == 512 { flush() }
                    return true
                }
                flush()
            }
        }
        return ExitCode.success
    }
}
