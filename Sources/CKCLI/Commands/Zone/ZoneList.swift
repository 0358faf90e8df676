import CKCore

extension ZoneCommands {
    static let list: Command = Command(["zone", "list"], synopsis: "", summary: "List the zones of a database", endpoint: .zonesList) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listZones(as: try inv.caller()))
        return ExitCode.success
    }
}
