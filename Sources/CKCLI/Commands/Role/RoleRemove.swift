import CKCore

extension RoleCommands {
    static let remove: CommandSpec = CommandSpec(synopsis: "ROLE APPLE-ID",
        summary: "Take a custom security role from a user") { inv in
        inv.print(try inv.api.setRole(try roleRequest(inv, member: false), as: try inv.caller()))
        return ExitCode.success
    }
}
