import CKCore

extension RecordCommands {
    static let modify: CommandSpec = CommandSpec(synopsis: "< REQUEST.json",
        summary: "Apply a Web Services records/modify request from stdin",
        details: """
        Reads {"operations": [{"operationType": "create|update|forceUpdate|replace|forceReplace|
        delete|forceDelete", "record": {…}}], "atomic": true, "zoneID": {"zoneName": …},
        "desiredKeys": […]} and prints {"records": [...]}: one result per operation, in order
        (a record, a tombstone, or an error dictionary). A value that does not fit its type
        fails its own operation (BAD_REQUEST) and the others are applied. In a custom zone an
        atomic request applies all or nothing and the other operations fail with ATOMIC_ERROR.
        At most 200 operations (LIMIT_EXCEEDED, nothing applied). Exit 9 when any operation
        failed.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let body = try inv.readJSONInput(what: "modify request")
        let req = try ModifyRequest.parse(body)
        // Asset values given as "@path" strings in the request are read here.
        var assets: [String: [UInt8]] = [:]
        var ops = req.operations
        let fa = FieldArguments(currentDirectory: inv.io.currentDirectory, command: inv.command.path)
        if let opsJSON = body["operations"]?.arrayValue {
            for (i, oj) in opsJSON.enumerated() {
                guard let f = oj["record"]?["fields"]?.objectValue else { continue }
                let needsFiles = f.filter { ($0.value["value"]?.stringValue ?? "").hasPrefix("@") }
                guard !needsFiles.isEmpty else { continue }
                let parsed = try fa.parseFieldObject(needsFiles)
                for (k, v) in parsed.fields { ops[i].fields[k] = v; ops[i].untyped[k] = parsed.untyped[k] }
                assets.merge(parsed.assets) { a, _ in a }
            }
        }
        var request = req
        request.operations = ops
        request.zoneName = try req.zone(fallback: inv.globals.zone)
        request.uploadedAssets = assets
        request.takesExportedAssets = true
        let response = try inv.api.modifyRecords(request, as: try inv.caller())
        inv.print(response)
        // A failed item's summary is stderr's first line; the fields defined come after it.
        let exit = inv.batchExit(response.results, noun: "operations")
        inv.announce(response.definedFields)
        return exit
    }
}
