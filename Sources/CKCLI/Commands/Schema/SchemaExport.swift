import CKCore

extension SchemaCommands {
    static let export: Command = Command(["schema", "export"], synopsis: "[--environment E]",
        summary: "Print the schema in the CloudKit schema language (.ckdb)",
        details: """
        Prints the environment's schema as cktool export-schema does: DEFINE SCHEMA, the roles,
        then each record type with its six system fields (quoted), its fields with their index
        options (QUERYABLE SEARCHABLE SORTABLE) and its GRANTs; Users last. The output is text,
        not JSON, so it can go straight into a .ckdb file; --format does not change it.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.io.writeOut(try inv.api.exportSchema(as: try inv.caller()).text)
        return ExitCode.success
    }
}
