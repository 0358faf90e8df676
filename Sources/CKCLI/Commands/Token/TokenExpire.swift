import CKCore

extension TokenCommands {
    static let expire: CommandSpec = CommandSpec(synopsis: "--zone Z",
        summary: "Expire every change token of a zone issued so far (fault injection)",
        details: """
        Drops the zone's retained history up to now, as CloudKit's server does on its own
        schedule: every earlier token of the zone (and every bookmark) then fails with
        CHANGE_TOKEN_EXPIRED, while fetching from the current head keeps working.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.expireTokens(ExpireTokensRequest(zoneName: inv.globals.zone), as: try inv.caller()))
        return ExitCode.success
    }
}
