import CKCore
import CKJSON
import CKModel

extension RecordCommands {
    static let save: CommandSpec = CommandSpec(synopsis: "[--type T] [--name N] [--tag TAG | --force] [--replace] [--parent NAME | --no-parent] [FIELD[:TYPE]=VALUE…]",
        summary: "Save one record (create, update, replace)",
        options: [
            OptionSpec("--type", aliases: ["--record-type"], value: "T", help: "record type (needed to create)"),
            OptionSpec("--name", value: "N", help: "record name (default: a new UUID)"),
            OptionSpec("--tag", value: "TAG", help: "update: merge the fields if TAG is the current recordChangeTag, else CONFLICT"),
            OptionSpec("--force", help: "forceUpdate: create or merge without checking the tag"),
            OptionSpec("--replace", help: "replace (with --tag) or forceReplace (with --force): omitted fields become null"),
            OptionSpec("--fields-json", value: "JSON", help: "cktool-style fields: {\"f\": {\"type\": \"stringType\", \"value\": …}}"),
            OptionSpec("--parent", value: "NAME", help: "the record's parent (sharing hierarchies: a record whose parent is shared is shared with it)"),
            OptionSpec("--no-parent", help: "take the record's parent away (an update otherwise keeps it)"),
            OptionSpec("--stdin", help: "read a Web Services record dictionary on stdin (the default when no fields, --type, --parent or --no-parent are given)"),
            fieldsOption,
        ],
        details: """
        A field argument is name:TYPE=value, for any type: STRING, INT64, DOUBLE, TIMESTAMP,
        BYTES (base64), REFERENCE (recordName[,NONE|DELETE_SELF|VALIDATE]), LOCATION (lat,lon),
        ASSET (@file), and each *_LIST (comma-separated, or a JSON array; LOCATION_LIST
        separated by ';'). In name=value the type is the one the schema has for the field (else
        the one the field has in the record being changed), so title=-5 into a STRING field is
        the string "-5"; a field neither knows is inferred: lowercase true/false → INT64 1/0, a
        JSON number (no leading zeros, no '+') → INT64 if whole and within 64 bits, else
        DOUBLE; an ISO-8601 date or date-time → TIMESTAMP; anything else (02139, TRUE, 1e999,
        a 20-digit integer) → STRING. A value that cannot be the field's type fails with
        BAD_REQUEST (exit 6).

        A date or date-time without an offset (2019-10-28, 2019-10-28T09:30) is local time
        ($TZ); with Z or +01:00 it is exact. An integer is milliseconds since 1970.
        A STRING, BYTES or ASSET value @FILE is that file's content (verbatim), @- is stdin
        (one field at most), and @@… is a value starting with a literal '@'.

        Without --tag or --force the save is a create: EXISTS if the name is taken. A record on
        stdin that carries a recordChangeTag is an update with that tag. An update keeps the
        record's parent unless --parent gives another or --no-parent takes it away (a replace
        drops it). Prints the records/modify response {"records": [record]}.

        Example:
          ck record save --type ToDoItem --name todo-1 title="Get apples" dueDate:TIMESTAMP=2019-10-28 isCompleted=false
        """) { inv in
        let fa = FieldArguments(currentDirectory: inv.io.currentDirectory, command: inv.command.path,
                                timeZone: { FieldText.localTimeZone(inv.io.environment) }, stdin: StdinSource { try inv.readStdin(what: "a field value", limit: $0) })
        let args = try fa.scan(inv.args.positionals)
        let argNames = Set(args.map(\.name))
        var input = FieldInput()
        if let fj = inv.args.value("--fields-json") {
            let more = try fa.parseFieldsJSON(fj)
            for (k, v) in more.fields {
                if argNames.contains(k) { throw inv.usageError("field '\(k)' given both as an argument and in --fields-json") }
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
            || (inv.args.value("--type") == nil && inv.args.positionals.isEmpty && inv.args.value("--fields-json") == nil
                && inv.args.value("--parent") == nil && !inv.args.has("--no-parent"))
        if fromStdin {
            if let a = args.first(where: { $0.text == "@-" }) {
                throw inv.usageError("--stdin reads the record from stdin, so field '\(a.name)' cannot read its value there (@-)")
            }
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
            for (k, v) in parsed.fields where input.fields[k] == nil && !argNames.contains(k) {
                input.fields[k] = v
                input.untyped[k] = parsed.untyped[k]
            }
            input.assets.merge(parsed.assets) { a, _ in a }
        }
        if let n = inv.args.value("--name") { op.recordName = n }
        if let t = inv.args.value("--type") { op.recordType = t }
        if let t = inv.args.value("--tag") { op.recordChangeTag = t }
        if inv.args.has("--no-parent") {
            if inv.args.value("--parent") != nil { throw inv.usageError("--parent and --no-parent exclude each other") }
            op.parent = nil
            op.clearsParent = true
        }
        if let p = inv.args.value("--parent") { try Names.validateRecordName(p); op.parent = p; op.clearsParent = false }

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
        let caller = try inv.caller()
        // Untyped arguments take the type the schema (else the record being changed) gives
        // their field, as CloudKit types a value sent without one.
        var known: [String: KnownFieldType] = [:]
        let untyped = args.filter { $0.type == nil }.map(\.name)
        if !untyped.isEmpty {
            known = try inv.api.fieldTypeHints(FieldTypeHintsRequest(recordType: op.recordType, fieldNames: untyped, recordName: op.recordName,
                                                                       zoneName: zone), as: caller)
        }
        let given = try fa.read(args) { known[$0] }
        for (k, v) in given.fields { input.fields[k] = v }
        input.assets.merge(given.assets) { a, _ in a }
        for (k, v) in input.fields { op.fields[k] = v; op.untyped[k] = input.untyped[k] }

        var req = ModifyRequest(operations: [op], atomic: true, zoneName: zone, desiredKeys: try desiredKeys(inv))
        req.uploadedAssets = input.assets
        req.takesExportedAssets = true
        let response = try inv.api.modifyRecords(req, as: caller)
        if let e = response.results[0].error { throw e }
        inv.print(response)
        inv.announce(response.definedFields)
        return ExitCode.success
    }
}
