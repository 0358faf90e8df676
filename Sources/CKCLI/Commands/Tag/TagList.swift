import CKCore

extension TagCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "",
        summary: "List the tags",
        details: "Prints {\"tags\": [{name, message, created, zones}]}, by name: the tags of the database (--db, --as).") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listTags(as: try inv.caller()))
        return ExitCode.success
    }
}
