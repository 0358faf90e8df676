import CKCore

extension SchemaCommands {
    static let deploy: CommandSpec = CommandSpec(synopsis: "[--dry-run]",
        summary: "Promote the development schema to production (additively)",
        options: [OptionSpec("--dry-run", help: "print what would be added ({deployed: false, …}) and deploy nothing")],
        details: """
        Copies development's record types, fields, indexes, GRANTs and roles to production.
        Production is additive only: if development lacks a type or field production has, or
        gives one another type, nothing is deployed (BAD_REQUEST, exit 6). Prints the types
        and fields added.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.deploySchema(as: try inv.caller(), dryRun: inv.args.has("--dry-run")))
        return ExitCode.success
    }
}
