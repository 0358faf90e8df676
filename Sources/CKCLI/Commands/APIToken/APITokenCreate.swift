import CKCore

extension APITokenCommands {
    static let create: CommandSpec = CommandSpec(synopsis: "[--name N]",
        summary: "Make an API token for ck serve (?ckAPIToken=) in this container and environment",
        options: [OptionSpec("--name", value: "N", help: "a name to tell the token by in 'ck api-token list'")],
        details: """
        Prints {"apiToken", "containerIdentifier", "environment", "name"?, "created"}: 64 lowercase
        hex digits that a web app or script sends as ?ckAPIToken= with every request to 'ck serve'
        in this container (--container) and environment (--env).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.createAPIToken(name: inv.args.value("--name"), container: try inv.container(), environment: inv.globals.environment))
        return ExitCode.success
    }
}
