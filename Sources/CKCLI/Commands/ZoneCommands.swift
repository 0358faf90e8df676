import CKCore

/// `ck zone create|delete|purge|list`.
enum ZoneCommands {
    static var all: [Command] { [create, delete, purge, list] }

    static let create: Command = Command(["zone", "create"], synopsis: "NAME…", summary: "Create custom zones (private database only)", endpoint: "zones/modify",
        details: "Creating a zone that exists returns it unchanged. Custom zones exist only in the\nprivate database; public and shared refuse, as CloudKit does.") { inv in
        let names = try inv.positionals(min: 1, what: "zone name")
        for n in names { try Names.validateZoneName(n) }
        let db = try inv.database()
        let zones = try names.map { try db.zoneJSON(try db.createZone($0)) }
        inv.emit(["zones": .array(zones)], listKey: "zones")
        return ExitCode.success
    }

    static let delete: Command = Command(["zone", "delete"], synopsis: "NAME… [--if-exists]", summary: "Delete custom zones and every record in them", endpoint: "zones/modify",
        options: [OptionSpec("--if-exists", help: "a zone that is not there counts as deleted (left out of the output, exit 0)")],
        details: "Prints the zones/modify response {\"zones\": [{zoneID, deleted: true}]}. Every name is\nchecked first: one that is missing (ZONE_NOT_FOUND, unless --if-exists) deletes nothing.") { inv in
        try remove(inv, purge: false)
    }

    static let purge: Command = Command(["zone", "purge"], synopsis: "NAME… [--if-exists]", summary: "Purge custom zones: records, history and tokens gone (CloudKit's purge)",
        options: [OptionSpec("--if-exists", help: "a zone that is not there counts as purged (left out of the output, exit 0)")],
        details: """
        CloudKit's purge, as when the user clears an app's data in Settings: like 'zone delete',
        the zone, every record in it and its change history are gone, and every change token of
        the zone is CHANGE_TOKEN_EXPIRED (exit 7) once a zone of that name exists again ('zone
        changes' on the missing zone is ZONE_NOT_FOUND). 'database changes' then reports the zone
        as {zoneID, deleted: true, purged: true}: an app drops what it cached of the zone rather
        than uploading it again. Prints {"zones": [{zoneID, deleted: true, purged: true}]}. Every
        name is checked first: one that is missing (ZONE_NOT_FOUND, unless --if-exists) purges
        nothing. Only custom zones of the private database can be purged.
        """) { inv in
        try remove(inv, purge: true)
    }

    /// `zone delete` and `zone purge`: every name checked first, then each zone removed.
    private static func remove(_ inv: Invocation, purge: Bool) throws -> Int32 {
        var names = try inv.positionals(min: 1, what: "zone name")
        for n in names { try Names.validateZoneName(n) }
        var seen = Set<NameKey>()
        names = names.filter { seen.insert(NameKey($0)).inserted }
        let db = try inv.database()
        // Check every zone first so one bad name removes nothing.
        var present: [String] = []
        for n in names {
            if n == ZoneID.defaultZoneName { throw CloudKitError(.badRequest, "the default zone cannot be \(purge ? "purged" : "deleted")", zoneID: db.zoneID(n)) }
            if purge && inv.globals.scope != .private {
                throw CloudKitError(.badRequest, "only custom zones of the private database can be purged, not zones of the \(inv.globals.scope.rawValue) database", zoneID: db.zoneID(n))
            }
            do { _ = try db.zone(n); present.append(n) } catch let e as CloudKitError where e.code == .zoneNotFound && inv.args.has("--if-exists") {}
        }
        names = present
        if names.isEmpty {
            inv.emit(["zones": []], listKey: "zones")
            return ExitCode.success
        }
        _ = try db.requireWrite()
        var out: [JSONValue] = []
        for n in names {
            do { try purge ? db.purgeZone(n) : db.deleteZone(n) } catch let e as CloudKitError where e.code == .zoneNotFound && inv.args.has("--if-exists") { continue }
            out.append(purge ? ["zoneID": db.zoneID(n).json, "deleted": true, "purged": true] : ["zoneID": db.zoneID(n).json, "deleted": true])
        }
        inv.emit(["zones": .array(out)], listKey: "zones")
        return ExitCode.success
    }

    static let list: Command = Command(["zone", "list"], synopsis: "", summary: "List the zones of a database", endpoint: "zones/list") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let db = try inv.database()
        inv.emit(["zones": .array(try db.listZones().map { try db.zoneJSON($0) })], listKey: "zones")
        return ExitCode.success
    }
}
