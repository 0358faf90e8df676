import CKCore

extension SchemaCommands {
    static let export: CommandSpec = CommandSpec(synopsis: "[--environment E]",
        summary: "Print the schema in the CloudKit schema language (.ckdb)",
        details: """
        Prints the environment's schema as cktool export-schema does: DEFINE SCHEMA, the roles,
        then each record type with its six system fields (quoted), its fields with their index
        options (QUERYABLE SEARCHABLE SORTABLE) and its GRANTs; Users last. The output is text,
        not JSON, so it can go straight into a .ckdb file; --format does not change it, except
        --format json, which prints the schema as data: {roles, recordTypes: [{name, fields:
        [{name, type, queryable, searchable, sortable}], grants: {ROLE: [PERMISSION]}}]}.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        if inv.globals.formatGiven && inv.globals.format == .json {
            inv.print(try inv.api.exportSchemaJSON(as: try inv.caller()))
            return ExitCode.success
        }
        inv.io.writeOut(try inv.api.exportSchema(as: try inv.caller()).text)
        return ExitCode.success
    }
}
