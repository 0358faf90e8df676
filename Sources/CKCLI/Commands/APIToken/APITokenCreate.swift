import CKCore

extension APITokenCommands {
    static let create: CommandSpec = CommandSpec(synopsis: "[--name N] [--callback URL]",
        summary: "Make an API token for ck serve (?ckAPIToken=) in this container and environment",
        options: [OptionSpec("--name", value: "N", help: "a name to tell the token by in 'ck api-token list'"),
                  OptionSpec("--callback", value: "URL", help: "sign-in callback (URL Redirect): after signing in, the browser goes to URL?ckWebAuthToken=…&ckSession=…")],
        details: """
        Prints {"apiToken", "containerIdentifier", "environment", "name"?, "signInCallback"?,
        "created"}: 64 lowercase hex digits that a web app or script sends as ?ckAPIToken= with
        every request to 'ck serve' in this container (--container) and environment (--env).
        With --callback (an absolute http:// or https:// URL with no fragment, such as a
        command-line client's http://127.0.0.1:PORT/callback) the sign-in page of a request that
        carries the token redirects the browser there with the new session, as the CloudKit
        Console's "Sign In Callback: URL Redirect" does; without it the page posts the session to
        the page that opened it.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.createAPIToken(name: inv.args.value("--name"), signInCallback: inv.args.value("--callback"),
                                             container: try inv.container(), environment: inv.globals.environment))
        return ExitCode.success
    }
}
