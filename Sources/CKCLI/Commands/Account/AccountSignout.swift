import CKCore

extension AccountCommands {
    static let signout: CommandSpec = CommandSpec(synopsis: "", summary: "Sign a user out: the device's account, or --as APPLE-ID",
        details: """
        Signs out the device's account, or the user --as names: their web sessions of ck serve
        end, and the device's account becomes noAccount only if it is that user (another user's
        sign-out leaves the device as it is; they stay a user of this device, for --as).
        Prints the device's account as 'ck account' does, with signedOut: {appleID,
        userRecordName, webSessionsEnded} when there was a user to sign out.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.signOut(as: try inv.accountCaller()))
        return ExitCode.success
    }
}
