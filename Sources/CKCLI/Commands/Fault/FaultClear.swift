import CKCore

extension FaultCommands {
    static let clear: CommandSpec = CommandSpec(synopsis: "[ID]", summary: "Disarm one fault, or all of them",
        details: """
        Prints {"faults": [{id, deleted: true}]} for each fault removed: the one named (NOT_FOUND,
        exit 3, when there is none by that ID) or, without an ID, every one (none: {"faults": []}).
        """) { inv in
        let id = try inv.positionals(max: 1, what: "").first
        inv.print(try inv.api.clearFaults(ClearFaultsRequest(id: id)))
        return ExitCode.success
    }
}
