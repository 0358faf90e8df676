/// `ck help [COMMAND…]`
enum HelpCommand {
    static let command: Command = Command(["help"], synopsis: "[COMMAND…]", summary: "Show help for ck or one command") { inv in
        let table = CommandTable.standard
        let words = inv.args.positionals
        if words.isEmpty { inv.io.writeOut(Help.overview(table)); return ExitCode.success }
        if let c = table.command(words) { inv.io.writeOut(Help.text(for: c, table: table)); return ExitCode.success }
        if words.count == 1, table.groups.contains(words[0]) { inv.io.writeOut(Help.group(words[0], table: table)); return ExitCode.success }
        throw inv.usageError("no help for unknown command '\(words.joined(separator: " "))'")
    }
}
