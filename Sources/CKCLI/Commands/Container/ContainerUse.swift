import CKCore

extension ContainerCommands {
    static let use: CommandSpec = CommandSpec(synopsis: "ID", summary: "Set the default container of this data directory") { inv in
        let id = try inv.positionals(min: 1, max: 1, what: "container identifier")[0]
        inv.print(try inv.api.setDefaultContainer(id))
        return ExitCode.success
    }
}
