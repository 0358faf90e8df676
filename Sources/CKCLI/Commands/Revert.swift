import CKCore

extension HistoryCommands {
    static let revert: CommandSpec = CommandSpec(synopsis: "REF [--zone Z] [--dry-run]",
        summary: "Undo one change by writing its inverse as a new change (like git revert)",
        options: [dryRun],
        details: """
        REF names one change (ZONE@SEQ; a token, tag or time stands for the last change at or
        before it). Undoing a save of new fields sets those fields back (the record's other
        fields, and later changes to other fields, stay); undoing a creation deletes the record;
        undoing a deletion makes it again. When a later change touched what it changed (the
        same field, or the record was deleted or made again), it is a CONFLICT (exit 4): use
        'ck restore' to write a whole version back. Prints {"changes": [...]} as 'ck restore'.
        """) { inv in
        let raw = try inv.positionals(min: 1, max: 1, what: "reference (a change: ZONE@SEQ)")[0]
        let req = RevertRequest(try inv.reference(raw), zoneName: inv.zoneGiven, dryRun: inv.args.has("--dry-run"))
        return try finish(inv, try inv.api.revert(req, as: try inv.caller()))
    }
}
