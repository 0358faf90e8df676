import CKCore

extension ShareCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "[--zone Z]",
        summary: "List your shares (private database) or the shares you take part in (--db shared)",
        details: """
        In the private database: the shares you own (in zone Z, if given). In the shared
        database: the shares you are invited to (INVITED) or accepted, across owners — which is
        how an invited user finds the short GUID to accept. Prints {records: [share]}; a public
        share you joined by its URL shows its owner and you, not its other participants.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listShares(ShareListRequest(zoneName: inv.zoneGiven), as: try inv.caller()))
        return ExitCode.success
    }
}
