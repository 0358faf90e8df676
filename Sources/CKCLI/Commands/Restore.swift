import CKCore

extension HistoryCommands {
    static let restore: CommandSpec = CommandSpec(synopsis: "REF [--zone Z] [RECORD…] [--dry-run]",
        summary: "Write the records of a zone (or the ones named) back as they were at REF, as new changes",
        options: [dryRun],
        details: """
        Every record of the zone that differs from its version at REF (or only the RECORDs
        named) is written back: saved as it was (replace), made again if it was deleted since,
        deleted if it did not exist then. These are new changes, made by this user on this
        device: history is never rewritten, tokens stay valid, and clients following 'zone
        changes' see ordinary updates. Each write carries the record's current change tag, so a
        record changed meanwhile is a CONFLICT, not overwritten; in a custom zone the writes are
        one atomic request (per 200). Prints {"changes": [...]} as 'ck diff' does — from now to
        the restored state — with each record's new recordChangeTag. --dry-run only prints.
        REF is \(referenceHelp).
        """) { inv in
        let pos = try inv.positionals(min: 1, what: "reference")
        let ref = try inv.reference(pos[0])
        let names = try pos.dropFirst().map(RecordCommands.recordName)
        let req = RestoreRequest(ref, zoneName: inv.zoneGiven, recordNames: names, dryRun: inv.args.has("--dry-run"))
        return try finish(inv, try inv.api.restore(req, as: try inv.caller()))
    }
}
