/// `ck man`: the ck(1) manual page, generated from the command table.
enum ManCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "",
        summary: "Print the ck(1) manual page (roff, not JSON)",
        details: """
        Prints the manual page in roff on stdout (not JSON; --format does not apply): every
        command with its usage, summary and options, the global options, environment, exit
        status and files. Read it with:
          ck man | man -l -
        'make install' installs it as share/man/man1/ck.1, so 'man ck' finds it.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.io.writeOut(ManPage.roff(.standard))
        return ExitCode.success
    }
}
