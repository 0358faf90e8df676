import CKCore

extension ZoneCommands {
    static let create: CommandSpec = CommandSpec(synopsis: "NAME…", summary: "Create custom zones (private database only)",
        details: """
        Prints the zones/modify response {"zones": [zone…]}. Creating a zone that exists returns
        it unchanged. Custom zones exist only in the private database; public and shared refuse,
        as CloudKit does. Every name is attempted: with one, its failure is the command's error;
        with several, a name that fails is an error item {zoneID, serverErrorCode, reason}, the
        others are created, and ck exits 9.
        """) { inv in
        try modify(inv, try names(inv).map { .init(.create, $0) })
    }
}
