import CKCore

extension PermissionCommands {
    static let status: CommandSpec = CommandSpec(synopsis: "[userDiscoverability]",
        summary: "Show the discoverability permission for this container",
        details: "Status is initialState (never asked), denied or granted.") { inv in
        if !inv.args.positionals.isEmpty { _ = try permissionName(inv) }
        inv.print(try inv.api.permissionStatus(as: try inv.caller()))
        return ExitCode.success
    }
}
