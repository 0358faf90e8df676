import CKCore

extension APITokenCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "TOKEN", summary: "Revoke an API token",
        details: """
        Prints {"apiToken", "deleted": true}; requests carrying it are refused (401) from then on.
        NOT_FOUND (exit 3) when this container and environment have no such token.
        """) { inv in
        let token = try inv.positionals(min: 1, max: 1, what: "API token")[0]
        inv.print(try inv.api.deleteAPIToken(token, container: try inv.container(), environment: inv.globals.environment))
        return ExitCode.success
    }
}
