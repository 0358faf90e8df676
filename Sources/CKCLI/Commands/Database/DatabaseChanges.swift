import CKCore

/// `ck database changes`.
enum DatabaseCommands {
    static let changes: CommandSpec = CommandSpec(synopsis: "[--since TOKEN | --from-start] [--limit N] [--no-save]",
        summary: "Fetch the zones changed or deleted in a database since a token (changes/database)",
        options: [ChangeFeedOptions.databaseSince] + ChangeFeedOptions.feedOptions,
        details: """
        Prints the changes/database response {zones: [{zoneID, deleted}], syncToken, moreComing}:
        the custom zones created, written or deleted since the token, a deleted zone with
        "deleted": true, a purged one (ck zone purge) with "deleted": true, "purged": true;
        each zone once, as of its latest change. With --format ndjson: each zone is a line,
        then a line {syncToken, moreComing} (with --all, after each page).
        Bookmarks work as for 'ck zone changes' (one per database).
        Database and zone tokens are not interchangeable (BAD_REQUEST).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let (tokens, fromBookmark) = try ChangeFeedOptions.startTokens(inv, count: 1)
        let req = DatabaseChangesRequest(syncToken: tokens[0], resultsLimit: try ChangeFeedOptions.limit(inv), fromBookmark: fromBookmark)
        let caller = try inv.caller()
        let response: DatabaseChangesResponse
        if inv.args.has("--all") && inv.globals.format == .ndjson {
            // Each page as it comes: its zones, then a line {syncToken, moreComing}.
            response = try inv.api.followDatabaseChanges(req, as: caller) { page in
                inv.print(page)
                return inv.io.writable()
            }
        } else {
            response = inv.args.has("--all") ? try inv.api.allDatabaseChanges(req, as: caller, while: { inv.io.writable() })
                                             : try inv.api.databaseChanges(req, as: caller)
            inv.print(response)
        }
        if ChangeFeedOptions.savesBookmarks(inv) {
            try inv.afterOutput { try inv.api.saveBookmarks([BookmarkUpdate(zoneName: nil, token: response.result.syncToken)], as: caller) }
        }
        return ExitCode.success
    }
}
