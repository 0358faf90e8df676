import CKCore

extension ServerKeyCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List the server-to-server keys of this container and environment",
        details: "Prints {\"keys\": [...]}, oldest first, each as 'ck server-key add' printed it.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listServerKeys(container: try inv.container(), environment: inv.globals.environment))
        return ExitCode.success
    }
}
