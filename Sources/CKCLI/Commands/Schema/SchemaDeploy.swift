import CKCore

extension SchemaCommands {
    static let deploy: CommandSpec = CommandSpec(synopsis: "",
        summary: "Promote the development schema to production (additively)",
        details: """
        Copies development's record types, fields, indexes, GRANTs and roles to production.
        Production is additive only: if development lacks a type or field production has, or
        gives one another type, nothing is deployed (BAD_REQUEST, exit 6). Prints the types
        and fields added.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.deploySchema(as: try inv.caller()))
        return ExitCode.success
    }
}
