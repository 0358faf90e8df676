import CKCore

extension ShareCommands {
    static let accept: CommandSpec = CommandSpec(synopsis: "SHARE-URL|SHORTGUID",
        summary: "Accept a share you were invited to (or a public one): its zone joins your shared database",
        details: """
        Run as the invited user (--as APPLE-ID, $CK_USER, or the device's account). Prints
        {results: [{zoneID, shortGUID, share, ownerIdentity, rootRecordName, participantStatus,
        participantPermission, participantType, databaseScope, …}]} (the ShortGUID result
        dictionary). A share you are not invited to (or were removed from) whose public
        permission is none does not exist for you: NOT_FOUND (exit 3), as for an unknown short
        GUID. Accepting twice changes nothing.
        """) { inv in
        let ref = try inv.positionals(min: 1, max: 1, what: "share URL or short GUID")[0]
        let response = try inv.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(ref)]), as: try inv.caller())
        if let e = response.failures.first { throw e }
        inv.print(response)
        return ExitCode.success
    }
}
