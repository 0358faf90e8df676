import CKCore

extension TagCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "NAME…",
        summary: "Delete tags (the history they name stays)",
        details: "Every name is checked first: an unknown one (NOT_FOUND, exit 3) deletes nothing.\nPrints {\"tags\": [...]} of the tags deleted.") { inv in
        let names = try inv.positionals(min: 1, what: "tag name")
        inv.print(try inv.api.deleteTags(DeleteTagsRequest(names: names), as: try inv.caller()))
        return ExitCode.success
    }
}
