import CKCore

extension AccountCommands {
    static let webAuthToken: CommandSpec = CommandSpec(synopsis: "[--keep-signed-in]",
        summary: "Sign a user in to ck serve: print a web auth token (ckWebAuthToken)",
        options: [OptionSpec("--keep-signed-in", help: "a token that lasts 14 days instead of 30 minutes")],
        details: """
        Prints {"ckWebAuthToken", "userRecordName", "expires"} for the device's account, or for
        --as APPLE-ID (a user who signed in on this device), in this container and environment.
        A script or a CloudKit JS client in Node sends it as ?ckWebAuthToken= (its authTokenStore).
        It is shown once: the data directory keeps only its hash. It expires 30 minutes after it
        was made (14 days with --keep-signed-in); ck serve hands out replacements as it is used.
        'ck account sessions end' or 'ck account signout' (of its user) revoke it.
        AUTHENTICATION_REQUIRED (exit 5) when the account is not available.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.createWebAuthToken(as: try inv.caller(), keepSignedIn: inv.args.has("--keep-signed-in")))
        return ExitCode.success
    }
}
