/// `ck help [COMMAND…]`
enum HelpCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[COMMAND…] [--all]", summary: "Show help for ck or one command",
        options: [OptionSpec("--all", help: "every command with its summary, and every global option with its variable")]) { inv in
        let table = CommandTable.standard
        let words = inv.args.positionals
        if inv.args.has("--all") {
            guard words.isEmpty else { throw inv.usageError("--all takes no command") }
            inv.io.writeOut(Help.full(table))
            return ExitCode.success
        }
        if words.isEmpty { inv.io.writeOut(Help.overview(table)); return ExitCode.success }
        if let c = table.command(words) { inv.io.writeOut(Help.text(for: c, table: table)); return ExitCode.success }
        if words.count == 1, table.groups.contains(words[0]) { inv.io.writeOut(Help.group(words[0], table: table)); return ExitCode.success }
        throw inv.usageError("no help for unknown command '\(words.joined(separator: " "))'")
    }
}
