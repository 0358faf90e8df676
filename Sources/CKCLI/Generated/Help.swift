import Foundation

/// Help text, generated from the command table.
enum Help {
    /// Topics of the one-screen overview, by a command's first word; a command whose word is
    /// not here is listed under "Other", so none goes missing.
    static let topics: [(String, [String])] = [
        ("Start", ["init", "status", "container", "version"]),
        ("Account", ["account", "whoami", "permission", "user"]),
        ("Records", ["record", "import", "export"]),
        ("Zones, changes", ["zone", "database", "token"]),
        ("Notifications", ["subscribe", "subscription", "notifications"]),
        ("Sharing", ["share"]),
        ("Schema", ["schema", "role"]),
        ("History", ["log", "show", "diff", "blame", "tag", "restore", "revert", "gc"]),
        ("Remotes", ["remote", "clone", "fetch", "pull", "push"]),
        ("Serve, faults", ["serve", "console", "api-token", "server-key", "fault"]),
        ("Tools", ["fsck", "help", "completion", "man"]),
    ]

    /// `ck help`: one screen — the commands by topic, the global options, the exit codes.
    static func overview(_ table: CommandTable) -> String {
        var s = """
        ck — CloudKit on the command line, on a store of plain JSON files.

        usage: ck [global options] <command> [options] [args]


        """
        var placed = Set<String>()
        var rows: [(String, String)] = []
        func words(_ firsts: [String]) -> String {
            var out: [String] = []
            for first in firsts {
                let cs = table.commands.filter { $0.path[0] == first }
                if cs.isEmpty { continue }
                cs.forEach { placed.insert($0.name) }
                let subs = cs.filter { $0.path.count > 1 }.map { $0.path.dropFirst().joined(separator: " ") }
                let own = cs.contains { $0.path.count == 1 }
                if subs.isEmpty { out.append(first) } else { out.append(first + " " + (own ? "[" + subs.joined(separator: "|") + "]" : subs.joined(separator: "|"))) }
            }
            return out.joined(separator: ", ")
        }
        for (topic, firsts) in topics { let w = words(firsts); if !w.isEmpty { rows.append((topic, w)) } }
        let rest = table.commands.filter { !placed.contains($0.name) }.map(\.path[0])
        if !rest.isEmpty { rows.append(("Other", words(Array(NSOrderedSet(array: rest)) as? [String] ?? rest))) }
        let width = rows.map(\.0.count).max() ?? 0
        for (topic, w) in rows { s += "  " + topic.padding(toLength: width + 2, withPad: " ", startingAt: 0) + wrap(w, width: 96 - width - 4, indent: width + 4) + "\n" }
        let globals = GlobalOptions.specs.map { spec -> String in
            let name = spec.aliases.first(where: { $0.count < spec.name.count && $0.hasPrefix("--") }) ?? (spec.name == "--quiet" ? "-q" : spec.name)
            return name + (spec.value.map { " " + $0 } ?? "")
        }
        s += "\nGlobal options (anywhere on the line; each also from $CK_…):\n  " + wrap(globals.joined(separator: "  "), width: 94, indent: 2) + "\n"
        s += """

        Exit codes: 0 ok, 1 internal, 2 usage, 3 not found, 4 conflict/exists, 5 not signed in or
        not permitted, 6 invalid request or data, 7 change token expired, 8 limit or throttled,
        9 partial failure in a batch, 10 a remote's waiting ran out, 141 reader went away.

        'ck help <command>' (or 'ck <command> --help') for one command; 'ck help --all' for every
        command and option.

        """
        return s
    }

    /// `ck help --all`: every command with its summary, and every global option.
    static func full(_ table: CommandTable) -> String {
        var s = "ck — CloudKit on the command line, on a store of plain JSON files.\n\nusage: ck [global options] <command> [options] [args]\n\nCommands:\n"
        let width = table.commands.map { $0.name.count }.max() ?? 0
        for c in table.commands {
            s += "  " + c.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary + "\n"
        }
        s += "\nGlobal options (every command):\n" + optionLines(GlobalOptions.specs)
        s += "\nSee 'ck <command> --help' for one command.\n"
        return s
    }

    /// Greedy word wrap at `width` columns, continuation lines indented.
    static func wrap(_ text: String, width: Int, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !line.isEmpty && line.count + 1 + word.count > width { lines.append(line); line = String(word) } else { line += (line.isEmpty ? "" : " ") + word }
        }
        lines.append(line)
        return lines.map { $0.trimmingTrailingSpaces() }.joined(separator: "\n" + String(repeating: " ", count: indent))
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
        if c.path == ["help"] { return overview(table) }
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
