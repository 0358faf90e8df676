import CKCore

/// `ck status`: where commands act and how far this device is behind, like `git status`.
enum StatusCommand {
    static let command: Command = Command(["status"], synopsis: "",
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
        var o: [String: JSONValue] = [
            "dataDirectory": .string(inv.store.paths.root),
            "containerIdentifier": .string(try inv.container()),
            "environment": .string(inv.globals.environment.rawValue),
            "database": .string(inv.globals.scope.rawValue),
            "device": .string(inv.globals.device),
            "account": try AccountCommands.statusJSON(inv),
        ]
        // Armed faults (faults.md): a test that forgot `ck fault clear` shows here.
        if let faults = try? FaultStore(paths: inv.store.paths).list(), !faults.isEmpty {
            o["faults"] = .array(faults.map { .string($0.id) })
        }
        do {
            let db = try inv.database()
            let feeds = inv.globals.scope != .public
            var zones: [JSONValue] = []
            for z in try db.listZones() {
                var entry: [String: JSONValue] = ["zoneName": .string(z.zoneID.zoneName)]
                if feeds && !z.zoneID.isDefault { entry.merge(lagJSON(try db.zoneBookmarkLag(zone: z.zoneID.zoneName))) { $1 } }
                zones.append(.object(entry))
            }
            o["zones"] = .array(zones)
            if feeds { o["databaseChanges"] = .object(lagJSON(try db.sharedDatabaseBookmarkLag() ?? db.databaseBookmarkLag())) }
        } catch let e as CloudKitError where e.code == .authenticationRequired || e.code == .accessDenied {
            o["zonesUnavailable"] = .string(e.reason)
        }
        inv.emit(.object(o), listKey: "zones")
        return ExitCode.success
    }

    static func lagJSON(_ lag: BookmarkLag) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["bookmark": .string(lag.state.rawValue)]
        if let n = lag.changes { o["behind"] = .int(n) }
        if let r = lag.reason { o["reason"] = .string(r) }
        return o
    }
}
