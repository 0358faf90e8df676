import CKCore

/// `ck zone changes`, `ck database changes`, `ck token expire`: CloudKit's change feeds, with
/// the device's bookmarks standing in for the tokens an app keeps.
enum ChangeCommands {
    static var all: [Command] { [zoneChanges, databaseChanges, tokenExpire] }

    static let feedOptions: [OptionSpec] = [
        OptionSpec("--since", value: "TOKEN", help: "fetch changes after this token (the bookmark is left alone)"),
        OptionSpec("--from-start", help: "ignore the bookmark and fetch the whole retained history"),
        OptionSpec("--limit", value: "N", help: "at most N items per page [default: 200; the server caps pages at 200]"),
        OptionSpec("--no-save", help: "do not move the device's bookmark"),
    ]

    /// The token to fetch from: --since, nothing (--from-start), or the device's bookmark.
    static func startToken(_ inv: Invocation, bookmark: () throws -> String?) throws -> (token: String?, fromBookmark: Bool) {
        if let s = inv.args.value("--since") {
            if inv.args.has("--from-start") { throw inv.usageError("--since and --from-start exclude each other") }
            return (s, false)
        }
        if inv.args.has("--from-start") { return (nil, true) }
        return (try bookmark(), true)
    }

    static func limit(_ inv: Invocation) throws -> Int {
        min(try inv.positiveInt("--limit") ?? Limits.resultsPerPage, Limits.resultsPerPage)
    }

    static let zoneChanges: Command = Command(["zone", "changes"], synopsis: "[--zone Z] [--since TOKEN | --from-start] [--limit N] [--fields a,b] [--no-save]",
        summary: "Fetch the records changed in a custom zone since a token",
        options: feedOptions + [RecordCommands.fieldsOption],
        details: """
        Prints {zoneID, records, syncToken, moreComing}: the latest state of each record changed
        since the token, deletions as {recordName, deleted: true}, at most N per page; call again
        with the returned syncToken while moreComing is true. Without --since, ck continues from
        this device's bookmark for the zone (--device, $CK_DEVICE) and moves it to the new token
        once the output has been written (and, on a pipe, read): if stdout fails or its reader
        goes away first, the bookmark stays where it was.
        A token older than the zone's retained history fails with CHANGE_TOKEN_EXPIRED (exit 7):
        refetch with --from-start. Change feeds exist only for custom zones of the private and
        shared databases, as in CloudKit.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let n = try limit(inv)
        let keys = try RecordCommands.desiredKeys(inv)
        let db = try inv.database()
        let zone = inv.globals.zone
        let (since, fromBookmark) = try startToken(inv) { try db.bookmark(zone: zone) }
        let page = try db.zoneChanges(zone: zone, since: since, limit: n)
        let records: [JSONValue] = page.changes.map {
            switch $0 {
            case .record(let r): return r.json(assetBase: inv.assetBase, desiredKeys: keys)
            case .deleted(let name): return Record.tombstone(recordName: name, zoneID: page.zoneID)
            }
        }
        inv.emit(["zoneID": page.zoneID.json, "records": .array(records), "syncToken": .string(page.syncToken),
                  "moreComing": .bool(page.moreComing)], listKey: "records")
        if fromBookmark && !inv.args.has("--no-save") { try inv.afterOutput { try db.saveBookmark(zone: zone, token: page.syncToken) } }
        return ExitCode.success
    }

    static let databaseChanges: Command = Command(["database", "changes"], synopsis: "[--since TOKEN | --from-start] [--limit N] [--no-save]",
        summary: "Fetch the zones changed or deleted in a database since a token",
        options: feedOptions,
        details: """
        Prints {zones, deletedZones, syncToken, moreComing}: the custom zones created, written or
        deleted since the token. Bookmarks work as for 'ck zone changes' (one per database).
        Database and zone tokens are not interchangeable (BAD_REQUEST).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let n = try limit(inv)
        let db = try inv.database()
        let (since, fromBookmark) = try startToken(inv) { try db.bookmark(zone: nil) }
        let page = try db.databaseChanges(since: since, limit: n)
        inv.emit(["zones": .array(page.zones.map { ["zoneID": $0.json] }), "deletedZones": .array(page.deletedZones.map { ["zoneID": $0.json] }),
                  "syncToken": .string(page.syncToken), "moreComing": .bool(page.moreComing)], listKey: "zones")
        if fromBookmark && !inv.args.has("--no-save") { try inv.afterOutput { try db.saveBookmark(zone: nil, token: page.syncToken) } }
        return ExitCode.success
    }

    static let tokenExpire: Command = Command(["token", "expire"], synopsis: "--zone Z",
        summary: "Expire every change token of a zone issued so far (fault injection)",
        details: """
        Drops the zone's retained history up to now, as CloudKit's server does on its own
        schedule: every earlier token of the zone (and every bookmark) then fails with
        CHANGE_TOKEN_EXPIRED, while fetching from the current head keeps working.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let db = try inv.database()
        let token = try db.expireTokens(zone: inv.globals.zone)
        inv.emit(["zoneID": db.zoneID(inv.globals.zone).json, "syncToken": .string(token)])
        return ExitCode.success
    }
}
