import CKCore

extension APITokenCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List the API tokens of this container and environment",
        details: "Prints {\"apiTokens\": [...]}, oldest first, each as 'ck api-token create' printed it.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listAPITokens(container: try inv.container(), environment: inv.globals.environment))
        return ExitCode.success
    }
}
