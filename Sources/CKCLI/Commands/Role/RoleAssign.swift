import CKCore

extension RoleCommands {
    static let assign: CommandSpec = CommandSpec(synopsis: "ROLE APPLE-ID",
        summary: "Give a user a custom security role (public database GRANTs)") { inv in
        inv.print(try inv.api.setRole(try roleRequest(inv, member: true), as: try inv.caller()))
        return ExitCode.success
    }
}
