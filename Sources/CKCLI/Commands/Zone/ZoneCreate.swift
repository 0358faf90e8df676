import CKCore

extension ZoneCommands {
    static let create: Command = Command(["zone", "create"], synopsis: "NAME…", summary: "Create custom zones (private database only)", endpoint: .zonesModify,
        details: "Creating a zone that exists returns it unchanged. Custom zones exist only in the\nprivate database; public and shared refuse, as CloudKit does.") { inv in
        let req = ZonesModifyRequest(operations: try names(inv).map { .init(.create, $0) })
        inv.print(try inv.api.modifyZones(req, as: try inv.caller()))
        return ExitCode.success
    }
}
