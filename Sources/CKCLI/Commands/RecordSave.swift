import CKCore

extension RecordCommands {
    static let save: Command = Command(["record", "save"], synopsis: "[--type T] [--name N] [--tag TAG | --force] [--replace] [FIELD[:TYPE]=VALUE…]",
        summary: "Save one record (create, update, replace)",
        options: [
            OptionSpec("--type", value: "T", help: "record type (needed to create)"),
            OptionSpec("--name", value: "N", help: "record name (default: a new UUID)"),
            OptionSpec("--tag", value: "TAG", help: "update: merge the fields if TAG is the current recordChangeTag, else CONFLICT"),
            OptionSpec("--force", help: "forceUpdate: create or merge without checking the tag"),
            OptionSpec("--replace", help: "replace (with --tag) or forceReplace (with --force): omitted fields become null"),
            OptionSpec("--fields-json", value: "JSON", help: "cktool-style fields: {\"f\": {\"type\": \"stringType\", \"value\": …}}"),
            OptionSpec("--stdin", help: "read a Web Services record dictionary on stdin (the default when no fields or --type are given)"),
            fieldsOption,
        ],
        details: """
        Field arguments are name=value with the type inferred (integer → INT64, decimal → DOUBLE,
        true/false → INT64 1/0, ISO-8601 date or date-time → TIMESTAMP, otherwise STRING), or
        name:TYPE=value for any type: STRING, INT64, DOUBLE, TIMESTAMP, BYTES (base64 or @file),
        REFERENCE (recordName[,NONE|DELETE_SELF|VALIDATE]), LOCATION (lat,lon), ASSET (@file),
        and each *_LIST (comma-separated, or a JSON array; LOCATION_LIST separated by ';').

        Without --tag or --force the save is a create: EXISTS if the name is taken. A record on
        stdin that carries a recordChangeTag is an update with that tag. Prints the
        records/modify response {"records": [record]}.

        Example:
          ck record save --type ToDoItem --name todo-1 title="Get apples" dueDate:TIMESTAMP=2019-10-28 isCompleted=false
        """) { inv in
        let fa = FieldArguments(currentDirectory: inv.io.currentDirectory, command: inv.command.path)
        var input = try fa.parse(inv.args.positionals)
        if let fj = inv.args.value("--fields-json") {
            let more = try fa.parseFieldsJSON(fj)
            for (k, v) in more.fields {
                if input.fields[k] != nil { throw inv.usageError("field '\(k)' given both as an argument and in --fields-json") }
                input.fields[k] = v
                input.untyped[k] = more.untyped[k]
            }
            input.assets.merge(more.assets) { a, _ in a }
        }
        if inv.args.has("--force") && inv.args.value("--tag") != nil { throw inv.usageError("--tag and --force exclude each other") }
        if let n = inv.args.value("--name") { try Names.validateRecordName(n) }
        if let t = inv.args.value("--type") { try Names.validateRecordType(t) }

        var op = RecordOperation(type: .create)
        let fromStdin = inv.args.has("--stdin")
            || (inv.args.value("--type") == nil && inv.args.positionals.isEmpty && inv.args.value("--fields-json") == nil)
        if fromStdin {
            var j = try inv.readJSONInput(what: "record")
            // A response ck (or CloudKit) printed, {"records": [one record]}, is that record.
            if let o = j.objectValue, o.count == 1, let list = o["records"]?.arrayValue {
                guard list.count == 1 else { throw CloudKitError.badRequest("record on stdin: a {\"records\": [...]} document must hold exactly one record to save (use 'ck record modify' or 'ck import' for several)") }
                j = list[0]
            }
            var fieldsJSON: [String: JSONValue] = [:]
            var rec = j.objectValue ?? [:]
            if let f = rec["fields"]?.objectValue { fieldsJSON = f; rec["fields"] = nil }
            op = try ModifyRequest.parseRecord(j.objectValue == nil ? j : .object(rec), type: .create)
            let parsed = try fa.parseFieldObject(fieldsJSON)
            for (k, v) in parsed.fields where input.fields[k] == nil { input.fields[k] = v; input.untyped[k] = parsed.untyped[k] }
            input.assets.merge(parsed.assets) { a, _ in a }
        }
        if let n = inv.args.value("--name") { op.recordName = n }
        if let t = inv.args.value("--type") { op.recordType = t }
        if let t = inv.args.value("--tag") { op.recordChangeTag = t }
        for (k, v) in input.fields { op.fields[k] = v; op.untyped[k] = input.untyped[k] }

        let replace = inv.args.has("--replace")
        if inv.args.has("--force") {
            op.type = replace ? .forceReplace : .forceUpdate
        } else if op.recordChangeTag != nil {
            op.type = replace ? .replace : .update
        } else if replace {
            throw inv.usageError("--replace needs --tag TAG (replace) or --force (forceReplace)")
        }
        if op.type == .create && op.recordType == nil { throw inv.usageError("creating a record needs --type (or a recordType on stdin)") }

        // A record on stdin names its zone; --zone, when given, must agree.
        var zone = inv.globals.zone
        if let z = op.zoneName {
            if inv.args.has("--zone") && z != zone {
                throw CloudKitError.badRequest("the record's zoneID names zone '\(z)' but --zone says '\(zone)'")
            }
            zone = z
        }
        let db = try inv.database()
        AssetDownloads.collect([op], store: inv.store.assets, into: &input.assets)
        let result = try db.modify(zone: zone, operations: [op], atomic: true, assets: input.assets)[0]
        if let e = result.error { throw e }
        inv.emit(["records": [inv.resultJSON(result, .modify, desiredKeys: try desiredKeys(inv))]], listKey: "records")
        return ExitCode.success
    }
}
