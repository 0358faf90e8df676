import CKCore

extension ContainerCommands {
    static let show: CommandSpec = CommandSpec(synopsis: "", summary: "Show the container, environment and database in use") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.showContainer(as: try inv.caller()))
        return ExitCode.success
    }
}
