import CKCore

extension ShareCommands {
    static let get: CommandSpec = CommandSpec(synopsis: "[SHARE] [--zone Z]", summary: "Show a share record",
        details: shareArgument + """

        With only --zone: the zone's share, when it has one.
        Prints {records: [share]}. A share you take part in shows every participant; a public
        share seen by its URL shows its owner and you (once you accepted) only; a share you may
        not see is NOT_FOUND (exit 3), as an unknown short GUID.
        """) { inv in
        let p = try inv.positionals(max: 1, what: "share")
        inv.print(try inv.api.lookupShare(ShareLookupRequest(reference: p.first, zoneName: inv.zoneGiven), as: try inv.caller()))
        return ExitCode.success
    }
}
