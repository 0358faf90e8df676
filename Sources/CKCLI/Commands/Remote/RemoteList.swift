import CKCore

extension RemoteCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List the remotes of this data directory",
        details: "Prints {\"remotes\": [...]}, by name, each as 'ck remote show' prints it without credentials.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listRemotes())
        return ExitCode.success
    }
}
