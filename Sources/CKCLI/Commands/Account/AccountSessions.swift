import CKCore

extension AccountCommands {
    static let sessions: CommandSpec = CommandSpec(synopsis: "",
        summary: "List a user's web sessions of ck serve (the device's account, or --as APPLE-ID)",
        details: """
        Prints {"sessions": [{id, containerIdentifier, environment, created, expires,
        keepSignedIn, renewed?}]}, oldest first: each sign-in (the sign-in page, 'ck account
        web-auth-token') with a token that has not expired. A session's tokens replaced by
        rotation belong to it; expires is when its last one expires, renewed when a request
        last got a replacement. id names the session (a prefix of the stored hash of its first
        token; no token). 'ck account sessions end ID' ends one, '--all' every one.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listWebSessions(as: try inv.accountCaller()))
        return ExitCode.success
    }

    static let sessionsEnd: CommandSpec = CommandSpec(synopsis: "ID | --all",
        summary: "End a user's web session of ck serve (or all of them)",
        options: [OptionSpec("--all", help: "end every web session of the user")],
        details: """
        Ends the session ID ('ck account sessions' lists them), or every session with --all, of
        the device's account or of --as APPLE-ID: its tokens, replaced ones included, are
        refused from the next request on (421 AUTHENTICATION_REQUIRED). Prints {"ended": [ID]}.
        NOT_FOUND (exit 3) when the user has no such session. The device's account is left as
        it is ('ck account signout' signs the user out).
        """) { inv in
        let ids = try inv.positionals(max: 1, what: "session ID")
        let all = inv.args.has("--all")
        guard all != (ids.count == 1) else {
            throw inv.usageError(all ? "give a session ID or --all, not both" : "missing session ID (or --all)")
        }
        inv.print(try inv.api.endWebSessions(ids.first, as: try inv.accountCaller()))
        return ExitCode.success
    }
}
