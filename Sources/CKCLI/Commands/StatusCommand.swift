import CKCore

/// `ck status`: where commands act and how far this device is behind, like `git status`.
enum StatusCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "",
        summary: "Show data directory, container, account, and how far this device's bookmarks are behind",
        details: """
        Prints {dataDirectory, containerIdentifier, environment, database, device, account:
        {status, userRecordName?, appleID?}, databaseChanges?, zones: [...], faults?}, faults
        being the IDs of the armed faults ('ck fault list'), when there are any. For the private and
        shared databases, databaseChanges and each custom zone carry this device's bookmark (the
        token saved by 'zone changes' / 'database changes'): "bookmark" is none, behind (with
        "behind": the number of changes the next fetch returns; 0 is up to date), expired
        (refetch with --from-start) or invalid; in the shared database, databaseChanges'
        "behind" counts the zones the next 'database changes' reports. A database that cannot
        be read (no account) shows "zonesUnavailable" with the reason instead of zones. Never
        fails for that.
        --format ndjson and table show a zone a line, then the rest.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.status(as: try inv.caller()))
        return ExitCode.success
    }
}
