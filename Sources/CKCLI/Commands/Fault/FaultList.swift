import CKCore

extension FaultCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List the armed faults, in the order they are checked",
        details: """
        Prints {"faults": [...]}: each fault as 'ck fault add' printed it, with what is left of
        it: times (matching operations still to fail), evaluations (operations a --rate fault
        has decided so far).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.faults())
        return ExitCode.success
    }
}
