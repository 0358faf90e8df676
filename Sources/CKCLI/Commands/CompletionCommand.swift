/// `ck completion bash|zsh|fish`: a shell completion script, generated from the command table.
enum CompletionCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "bash|zsh|fish",
        summary: "Print a shell completion script (a script, not JSON)",
        details: """
        Prints a completion script for the shell on stdout (not JSON; --format does not apply).
        It completes commands and subcommands, each command's options and the global options
        (aliases too), the values of --format, --database, --environment and --error-format,
        and zone names, which it asks of 'ck zone list'.
        Load it in the current shell:
          source <(ck completion bash)      # bash, e.g. in ~/.bashrc
          source <(ck completion zsh)       # zsh, after compinit
          ck completion fish | source       # fish
        'make install' installs all three where the shells look for them.
        """) { inv in
        let shell = try inv.positionals(min: 1, max: 1, what: "shell (bash, zsh or fish)")[0]
        let model = CompletionModel(table: .standard)
        switch shell {
        case "bash": inv.io.writeOut(model.bash())
        case "zsh": inv.io.writeOut(model.zsh())
        case "fish": inv.io.writeOut(model.fish())
        default: throw inv.usageError("unknown shell '\(shell)'; valid values: \(CompletionModel.shells.joined(separator: ", "))")
        }
        return ExitCode.success
    }
}
