import CKCore

extension ZoneCommands {
    static let delete: Command = Command(["zone", "delete"], synopsis: "NAME… [--if-exists]", summary: "Delete custom zones and every record in them", endpoint: .zonesModify,
        options: [ifExistsOption("deleted")],
        details: "Prints the zones/modify response {\"zones\": [{zoneID, deleted: true}]}. Every name is\nchecked first: one that is missing (ZONE_NOT_FOUND, unless --if-exists) deletes nothing.") { inv in
        let req = ZonesModifyRequest(operations: try names(inv).map { .init(.delete, $0) }, ifExists: inv.args.has("--if-exists"))
        inv.print(try inv.api.modifyZones(req, as: try inv.caller()))
        return ExitCode.success
    }
}
