import CKCore
import CKJSON
import CKModel

extension ZoneCommands {
    static let changes: CommandSpec = CommandSpec(synopsis: "[--zone Z]… [--since TOKEN… | --from-start] [--limit N] [--fields a,b] [--no-save]",
        summary: "Fetch the records changed in custom zones since their tokens (changes/zone)",
        options: [ChangeFeedOptions.zoneSince] + ChangeFeedOptions.feedOptions + [RecordCommands.fieldsOption],
        details: """
        Prints the changes/zone response {zones: [{zoneID, records, syncToken, moreComing}]},
        one entry per --zone, in order: each record changed since the zone's token once, at its
        current state, on the page of its latest change; deletions as {recordName, deleted:
        true, zoneID} (from the start, only of records this device created, or deleted while
        it paged, as CloudKit does); at most N per page; call again with the returned syncToken
        while moreComing is true. A zone that fails (not
        found, token expired) is an entry {zoneID, serverErrorCode, reason}; with several
        zones the others are still fetched and ck exits 9; with one it is the command's error.
        Without --since, each zone continues from this device's bookmark for it (--device,
        $CK_DEVICE), which moves to the new token once the output has been written (and, on a
        pipe, read): if stdout fails or its reader goes away first, nothing moves; when any zone
        fails (exit 9), no bookmark moves either, so a retry sees the same changes.
        A token older than the zone's retained history fails with CHANGE_TOKEN_EXPIRED (exit 7):
        refetch with --from-start. Change feeds exist only for custom zones of the private and
        shared databases, as in CloudKit. With --format ndjson: each record is a line, then a
        line {zoneID, syncToken, moreComing} closing the page (with --all, each page), so a
        script can keep the token of every page it has applied.
        """, severalZones: true) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let n = try ChangeFeedOptions.limit(inv)
        let keys = try RecordCommands.desiredKeys(inv)
        let zones = inv.globals.zones.isEmpty ? [inv.globals.zone] : inv.globals.zones
        var seen = Set<NameKey>()
        for z in zones where !seen.insert(NameKey(z)).inserted { throw inv.usageError("zone '\(Names.describe(z))' is given more than once") }
        let (tokens, fromBookmark) = try ChangeFeedOptions.startTokens(inv, count: zones.count)
        let req = ZoneChangesRequest(zones: zip(zones, tokens).map { ZoneChangesRequest.Zone(zoneName: $0, syncToken: $1, resultsLimit: n, desiredKeys: keys) },
                                     fromBookmarks: fromBookmark)
        let caller = try inv.caller()
        let response: ZoneChangesResponse
        if inv.args.has("--all") && inv.globals.format == .ndjson {
            // Each page as it comes, closed by its own token, which a script can keep.
            response = try inv.api.followZoneChanges(req, as: caller) { page in
                emit(inv, page)
                return inv.io.writable()
            }
            if zones.count == 1, let e = response.failures.first { throw e }
            // A zone that failed is a line of its own.
            emit(inv, response.failedZones)
        } else {
            response = inv.args.has("--all") ? try inv.api.allZoneChanges(req, as: caller, while: { inv.io.writable() })
                                             : try inv.api.zoneChanges(req, as: caller)
            if zones.count == 1, let e = response.failures.first { throw e }
            emit(inv, response)
        }
        // A partial failure moves no bookmark: a script that retries on a non-zero exit must
        // see the same changes again (each zone's syncToken is in the output to keep by hand).
        if ChangeFeedOptions.savesBookmarks(inv) && response.failures.isEmpty {
            let updates: [BookmarkUpdate] = zip(zones, response.zones).compactMap { z, item in
                guard case .page(let p, _) = item else { return nil }
                return BookmarkUpdate(zoneName: z, token: p.syncToken)
            }
            try inv.afterOutput { try inv.api.saveBookmarks(updates, as: caller) }
        }
        return inv.batchExit(response.failures.map(OperationResult.failed), total: zones.count, noun: "zones")
    }

    /// The changes/zone body; as NDJSON, each zone's records a line each, then a line closing it.
    static func emit(_ inv: Invocation, _ response: ZoneChangesResponse) {
        guard inv.globals.format == .ndjson else { return inv.print(response) }
        for item in response.zones {
            let e = response.entry(item)
            guard var o = e.objectValue, let records = o["records"]?.arrayValue else { inv.io.writeOut(JSONWriter.line(e)); continue }
            for r in records { inv.io.writeOut(JSONWriter.line(r)) }
            o["records"] = nil
            inv.io.writeOut(JSONWriter.line(.object(o)))
        }
    }
}
