import CKCore

extension SchemaCommands {
    static let reset: CommandSpec = CommandSpec(synopsis: "",
        summary: "Reset development to the production schema, deleting development data",
        details: "As the CloudKit console's Reset Environment: the development schema becomes\nproduction's, and every development record, subscription, notification and bookmark\nof the container is deleted. Production is untouched.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.resetSchema(as: try inv.caller()))
        return ExitCode.success
    }
}
