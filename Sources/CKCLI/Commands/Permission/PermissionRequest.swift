import CKCore

extension PermissionCommands {
    static let request: CommandSpec = CommandSpec(synopsis: "userDiscoverability [--deny]",
        summary: "Answer the discoverability prompt for this container (grant, or --deny)",
        options: [OptionSpec("--deny", help: "record that the user declined")]) { inv in
        _ = try permissionName(inv)
        inv.print(try inv.api.requestPermission(PermissionRequest(granted: !inv.args.has("--deny")), as: try inv.caller()))
        return ExitCode.success
    }
}
