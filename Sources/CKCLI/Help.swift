/// Help text, generated from the command table.
enum Help {
    static func overview(_ table: CommandTable) -> String {
        var s = """
        ck — CloudKit on the command line, on a store of plain JSON files.

        usage: ck <command> [options]

        Commands:

        """
        let width = table.commands.map { $0.name.count }.max() ?? 0
        for c in table.commands {
            s += "  " + c.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary + "\n"
        }
        s += "\nGlobal options (every command):\n" + optionLines(GlobalOptions.specs)
        s += """

        Exit codes: 0 ok, 1 internal, 2 usage, 3 not found, 4 conflict/exists, 5 not signed in or
        not permitted, 6 invalid request or data, 7 change token expired, 8 limit exceeded or
        throttled, 9 partial failure in a batch.

        See 'ck <command> --help' for one command.

        """
        return s
    }

    static func optionLines(_ specs: [OptionSpec]) -> String {
        let labels = specs.map { s -> String in
            var l = ([s.name] + s.aliases).joined(separator: ", ")
            if let v = s.value { l += " " + v }
            return l
        }
        let width = labels.map(\.count).max() ?? 0
        return zip(labels, specs).map { "  " + $0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $1.help + "\n" }.joined()
    }

    static func text(for c: Command, table: CommandTable) -> String {
        if c.path == HelpCommand.command.path { return overview(table) }
        var s = "usage: \(c.usage)\n\n\(c.summary)\n"
        if !c.details.isEmpty { s += "\n" + c.details + (c.details.hasSuffix("\n") ? "" : "\n") }
        if !c.options.isEmpty { s += "\nOptions:\n" + optionLines(c.options) }
        s += "\nGlobal options: see 'ck help'.\n"
        return s
    }

    static func group(_ name: String, table: CommandTable) -> String {
        var s = "usage: ck \(name) <subcommand> [options]\n\nSubcommands:\n"
        let cs = table.commands.filter { $0.path.first == name }
        let width = cs.map { $0.name.count }.max() ?? 0
        for c in cs { s += "  " + c.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary + "\n" }
        s += "\nSee 'ck \(name) <subcommand> --help'.\n"
        return s
    }
}

import Foundation
