import CKCore

extension HistoryCommands {
    static let blame: CommandSpec = CommandSpec(synopsis: "RECORD [--zone Z] [--at REF]",
        summary: "For each field of a record, the change that last set it",
        options: [OptionSpec("--at", value: "REF", help: "the record as of this point (\(referenceHelp))")],
        details: """
        Prints {recordName, recordType, recordChangeTag, zoneID, fields: [...]}: for each field,
        {field, type, value, seq, timestamp, userRecordName, deviceID, recordChangeTag} of the
        change that last set it, found by following the record's own history back (its cost is
        that record's history, not the zone's). A field set before the retained history ('ck
        gc') names the oldest retained change, with "boundary": true.
        """) { inv in
        let name = try RecordCommands.recordName(try inv.positionals(min: 1, max: 1, what: "record name")[0])
        inv.print(try inv.api.blame(BlameRequest(recordName: name, zoneName: inv.zoneGiven, at: try inv.atReference()), as: try inv.caller()))
        return ExitCode.success
    }
}
