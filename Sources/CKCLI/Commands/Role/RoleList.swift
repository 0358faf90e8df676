import CKCore

extension RoleCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List the custom roles and their members") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.roles(as: try inv.caller()))
        return ExitCode.success
    }
}
