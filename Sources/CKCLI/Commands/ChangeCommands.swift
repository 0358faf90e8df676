import CKCore

/// `ck zone changes`, `ck database changes`, `ck token expire`: CloudKit's change feeds, with
/// the device's bookmarks standing in for the tokens an app keeps.
enum ChangeCommands {
    static var all: [Command] { [zoneChanges, databaseChanges] }

    static let zoneSince = OptionSpec("--since", value: "TOKEN", repeatable: true,
        help: "fetch changes after this token (the bookmark is left alone); with several --zone, one --since per zone, in order")
    static let databaseSince = OptionSpec("--since", value: "TOKEN", help: "fetch changes after this token (the bookmark is left alone)")
    static let feedOptions: [OptionSpec] = [
        OptionSpec("--from-start", help: "ignore the bookmark and fetch the whole retained history"),
        OptionSpec("--limit", value: "N", help: "at most N items per page [default: 200; the server caps pages at 200]"),
        OptionSpec("--no-save", help: "do not move the device's bookmark"),
        OptionSpec("--all", help: "every page until moreComing is false, in one process (like gh --paginate); --format ndjson streams it"),
    ]

    /// Where each fetch starts: --since, nothing (--from-start), or the device's bookmark.
    static func startTokens(_ inv: Invocation, count: Int, bookmark: (Int) throws -> String?) throws -> (tokens: [String?], fromBookmark: Bool) {
        let since = inv.args.values("--since")
        if !since.isEmpty {
            if inv.args.has("--from-start") { throw inv.usageError("--since and --from-start exclude each other") }
            guard since.count == count else { throw inv.usageError("give one --since per --zone (\(count) zones, \(since.count) tokens)") }
            return (since, false)
        }
        if inv.args.has("--from-start") { return (Array(repeating: nil, count: count), true) }
        return (try (0..<count).map(bookmark), true)
    }

    static func limit(_ inv: Invocation) throws -> Int {
        min(try inv.positiveInt("--limit") ?? Limits.resultsPerPage, Limits.resultsPerPage)
    }

    static let zoneChanges: Command = Command(["zone", "changes"], synopsis: "[--zone Z]… [--since TOKEN… | --from-start] [--limit N] [--fields a,b] [--no-save]",
        summary: "Fetch the records changed in custom zones since their tokens (changes/zone)", endpoint: "changes/zone",
        options: [zoneSince] + feedOptions + [RecordCommands.fieldsOption],
        details: """
        Prints the changes/zone response {zones: [{zoneID, records, syncToken, moreComing}]},
        one entry per --zone, in order: the latest state of each record changed since the
        zone's token, deletions as {recordName, deleted: true, zoneID}, at most N per page; call
        again with the returned syncToken while moreComing is true. A zone that fails (not
        found, token expired) is an entry {zoneID, serverErrorCode, reason}; with several
        zones the others are still fetched and ck exits 9; with one it is the command's error.
        Without --since, each zone continues from this device's bookmark for it (--device,
        $CK_DEVICE), which moves to the new token once the output has been written (and, on a
        pipe, read): if stdout fails or its reader goes away first, nothing moves; when any zone
        fails (exit 9), no bookmark moves either, so a retry sees the same changes.
        A token older than the zone's retained history fails with CHANGE_TOKEN_EXPIRED (exit 7):
        refetch with --from-start. Change feeds exist only for custom zones of the private and
        shared databases, as in CloudKit. With --format ndjson: each record is a line, then a
        line {zoneID, syncToken, moreComing} closing each zone.
        """, severalZones: true) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let n = try limit(inv)
        let keys = try RecordCommands.desiredKeys(inv)
        let db = try inv.database()
        let zones = inv.globals.zones.isEmpty ? [inv.globals.zone] : inv.globals.zones
        var seen = Set<NameKey>()
        for z in zones where !seen.insert(NameKey(z)).inserted { throw inv.usageError("zone '\(Names.describe(z))' is given more than once") }
        let (tokens, fromBookmark) = try startTokens(inv, count: zones.count) { try db.bookmark(zone: zones[$0]) }
        var entries: [JSONValue] = []
        var fetched: [(zone: String, token: String)] = []
        var failures: [OperationResult] = []
        let all = inv.args.has("--all")
        let streaming = all && inv.globals.format == .ndjson
        for (i, zone) in zones.enumerated() {
            do {
                var records: [JSONValue] = []
                var since = tokens[i]
                var page: ZoneChangesResult
                repeat {
                    page = try db.zoneChanges(zone: zone, since: since, limit: n)
                    let pageRecords: [JSONValue] = page.changes.map {
                        switch $0 {
                        case .record(let r): return r.response(inv.style, desiredKeys: keys)
                        case .deleted(let name): return Record.tombstone(recordName: name, zoneID: page.zoneID)
                        }
                    }
                    // --all --format ndjson: each page goes out as it comes.
                    if streaming { pageRecords.forEach { inv.io.writeOut(JSONWriter.line($0)) } } else { records += pageRecords }
                    since = page.syncToken
                } while all && page.moreComing && inv.io.writable()
                if all && !streaming {
                    // One body for every page: each record once, in its latest state, where it
                    // last changed (applying the list in order gives the same replica).
                    var seen = Set<NameKey>()
                    records = records.reversed().filter { seen.insert(NameKey($0["recordName"]?.stringValue ?? "")).inserted }.reversed()
                }
                entries.append(["zoneID": page.zoneID.json, "records": .array(records), "syncToken": .string(page.syncToken),
                                "moreComing": .bool(page.moreComing)])
                fetched.append((zone, page.syncToken))
                if streaming { emitZoneChanges(inv, [entries.removeLast()]) }
            } catch let e as CloudKitError {
                if zones.count == 1 { throw e }
                var err = e
                if err.zoneID == nil { err.zoneID = db.zoneID(zone) }
                entries.append(err.envelope(style: inv.style))
                failures.append(.failed(err))
                if streaming { emitZoneChanges(inv, [entries.removeLast()]) }
            }
        }
        if !streaming { emitZoneChanges(inv, entries) }
        // A partial failure moves no bookmark: a script that retries on a non-zero exit must
        // see the same changes again (each zone's syncToken is in the output to keep by hand).
        if fromBookmark && !inv.args.has("--no-save") && !fetched.isEmpty && failures.isEmpty {
            try inv.afterOutput { for f in fetched { try db.saveBookmark(zone: f.zone, token: f.token) } }
        }
        return inv.batchExit(failures, total: zones.count, noun: "zones")
    }

    /// The changes/zone body; as NDJSON, each zone's records, then a line closing the zone.
    static func emitZoneChanges(_ inv: Invocation, _ entries: [JSONValue]) {
        guard inv.globals.format == .ndjson else {
            inv.emit(["zones": .array(entries)], listKey: "zones")
            return
        }
        for e in entries {
            guard var o = e.objectValue, let records = o["records"]?.arrayValue else { inv.io.writeOut(JSONWriter.line(e)); continue }
            for r in records { inv.io.writeOut(JSONWriter.line(r)) }
            o["records"] = nil
            inv.io.writeOut(JSONWriter.line(.object(o)))
        }
    }

    static let databaseChanges: Command = Command(["database", "changes"], synopsis: "[--since TOKEN | --from-start] [--limit N] [--no-save]",
        summary: "Fetch the zones changed or deleted in a database since a token (changes/database)", endpoint: "changes/database",
        options: [databaseSince] + feedOptions,
        details: """
        Prints the changes/database response {zones: [{zoneID, deleted}], syncToken, moreComing}:
        the custom zones created, written or deleted since the token, a deleted zone with
        "deleted": true, a purged one (ck zone purge) with "deleted": true, "purged": true.
        Bookmarks work as for 'ck zone changes' (one per database).
        Database and zone tokens are not interchangeable (BAD_REQUEST).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let n = try limit(inv)
        let db = try inv.database()
        let (tokens, fromBookmark) = try startTokens(inv, count: 1) { _ in try db.bookmark(zone: nil) }
        var page = try db.databaseChanges(since: tokens[0], limit: n)
        var changed = page.zones
        // --all: page after page; a zone seen again takes its later state, keeping its place.
        while inv.args.has("--all") && page.moreComing {
            page = try db.databaseChanges(since: page.syncToken, limit: n)
            for z in page.zones {
                if let at = changed.firstIndex(where: { NameKey($0.zoneID.zoneName) == NameKey(z.zoneID.zoneName) }) { changed[at] = z } else { changed.append(z) }
            }
        }
        // `purged` only on a purged zone's entry: the others keep the recorded shape {zoneID, deleted}.
        let zones: [JSONValue] = changed.map {
            var o: [String: JSONValue] = ["zoneID": $0.zoneID.json, "deleted": .bool($0.deleted)]
            if $0.purged { o["purged"] = true }
            return .object(o)
        }
        inv.emit(["zones": .array(zones), "syncToken": .string(page.syncToken), "moreComing": .bool(page.moreComing)], listKey: "zones")
        if fromBookmark && !inv.args.has("--no-save") { try inv.afterOutput { try db.saveBookmark(zone: nil, token: page.syncToken) } }
        return ExitCode.success
    }
}
