import CKCore

extension HistoryCommands {
    static let show: CommandSpec = CommandSpec(synopsis: "REF [--zone Z]",
        summary: "Show one change: the record before and after, and what changed field by field",
        details: """
        Prints {change, before, after, fields}: the change (as 'ck log' lists it), the record as
        it was before it (null: it did not exist) and after it (null: deleted), and fields:
        {F: {old, new}} for each field it changed. REF is \(referenceHelp); a token, tag or time
        stands for the last change at or before that point.
        """) { inv in
        let raw = try inv.positionals(min: 1, max: 1, what: "reference (a change: ZONE@SEQ, a token, a tag or a time)")[0]
        inv.print(try inv.api.show(ShowRequest(try inv.reference(raw), zoneName: inv.zoneGiven), as: try inv.caller()))
        return ExitCode.success
    }
}
