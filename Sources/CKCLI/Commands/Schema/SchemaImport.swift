import CKCore
import CKModel

extension SchemaCommands {
    static let importSchema: CommandSpec = CommandSpec(synopsis: "FILE [--validate]",
        summary: "Make a .ckdb file the development schema (or only check it)",
        options: [OptionSpec("--validate", help: "check the file (grammar, and nothing production has is lost) without applying it")],
        details: """
        Parses the whole schema language (comments, quoted identifiers, LIST<T>, QUERYABLE,
        SORTABLE, SEARCHABLE, ENCRYPTED, NUMBER PREFERRED AS, CREATE ROLE, GRANT) and replaces
        the development schema with it. Errors give line:column (exit 6). A schema that would
        remove or retype a type or field production has is refused and changes nothing. Use
        FILE '-' for stdin. Schemas are imported into development only (--env production is
        refused, exit 6): 'ck schema deploy' takes them to production.
        """) { inv in
        let file = try inv.positionals(min: 1, max: 1, what: "schema file")[0]
        let text: String
        if file == "-" { text = String(decoding: try inv.readStdin(what: "a schema (.ckdb text)"), as: UTF8.self) } else {
            let path = file.hasPrefix("/") ? file : inv.io.currentDirectory + "/" + file
            let b = try CloudKitAPI.readUserFile(path, shownAs: file)
            guard let s = String(validating: b, as: UTF8.self) else { throw CloudKitError.badRequest("schema file '\(file)' is not valid UTF-8") }
            text = s
        }
        let request = SchemaImportRequest(text: text, validateOnly: inv.args.has("--validate"))
        inv.print(try inv.api.importSchema(request, as: try inv.caller()))
        return ExitCode.success
    }
}
