import CKCore

extension ZoneCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "NAME… [--if-exists]", summary: "Delete custom zones and every record in them",
        options: [ifExistsOption("deleted")],
        details: """
        Prints the zones/modify response {"zones": [{zoneID, deleted: true}]}. Every name is
        attempted, as CloudKit does: with one, its failure (ZONE_NOT_FOUND for a zone that is
        not there, unless --if-exists) is the command's error; with several, a name that fails
        is an error item {zoneID, serverErrorCode, reason}, the others are deleted, and ck
        exits 9.
        """) { inv in
        try modify(inv, try names(inv).map { .init(.delete, $0) }, ifExists: inv.args.has("--if-exists"))
    }
}
