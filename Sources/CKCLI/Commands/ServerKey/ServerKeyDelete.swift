import CKCore

extension ServerKeyCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "KEY-ID", summary: "Revoke a server-to-server key",
        details: """
        Prints {"keyID", "deleted": true}; requests it signs are refused (401) from then on.
        NOT_FOUND (exit 3) when this container and environment have no such key.
        """) { inv in
        let keyID = try inv.positionals(min: 1, max: 1, what: "key ID")[0]
        inv.print(try inv.api.deleteServerKey(keyID: keyID, container: try inv.container(), environment: inv.globals.environment))
        return ExitCode.success
    }
}
