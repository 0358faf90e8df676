import CKCore

extension ZoneCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List the zones of a database") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listZones(as: try inv.caller()))
        return ExitCode.success
    }
}
