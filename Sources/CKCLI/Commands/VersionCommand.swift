/// `ck version` (and `ck --version`).
enum VersionCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "", summary: "Print ck's version (a line of text, not JSON)",
        details: "Prints one line, 'ck version X.Y.Z', as 'git version' does; 'ck --version' prints the same.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.io.writeOut(Version.line)
        return ExitCode.success
    }
}
