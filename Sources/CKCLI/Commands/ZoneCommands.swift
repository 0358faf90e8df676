import CKCore

/// `ck zone create|delete|list`.
enum ZoneCommands {
    static var all: [Command] { [create, delete, list] }

    static let create: Command = Command(["zone", "create"], synopsis: "NAME…", summary: "Create custom zones (private database only)",
        details: "Creating a zone that exists returns it unchanged. Custom zones exist only in the\nprivate database; public and shared refuse, as CloudKit does.") { inv in
        let names = try inv.positionals(min: 1, what: "zone name")
        for n in names { try Names.validateZoneName(n) }
        let db = try inv.database()
        let zones = try names.map { try db.zoneJSON(try db.createZone($0)) }
        inv.emit(["zones": .array(zones)], listKey: "zones")
        return ExitCode.success
    }

    static let delete: Command = Command(["zone", "delete"], synopsis: "NAME… [--if-exists]", summary: "Delete custom zones and every record in them",
        options: [OptionSpec("--if-exists", help: "a zone that is not there counts as deleted (left out of the output, exit 0)")],
        details: "Prints the zones/modify response {\"zones\": [{zoneID, deleted: true}]}. Every name is\nchecked first: one that is missing (ZONE_NOT_FOUND, unless --if-exists) deletes nothing.") { inv in
        var names = try inv.positionals(min: 1, what: "zone name")
        for n in names { try Names.validateZoneName(n) }
        var seen = Set<NameKey>()
        names = names.filter { seen.insert(NameKey($0)).inserted }
        let db = try inv.database()
        // Check every zone first so one bad name deletes nothing.
        var present: [String] = []
        for n in names {
            if n == ZoneID.defaultZoneName { throw CloudKitError(.badRequest, "the default zone cannot be deleted", zoneID: db.zoneID(n)) }
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
            do { try db.deleteZone(n) } catch let e as CloudKitError where e.code == .zoneNotFound && inv.args.has("--if-exists") { continue }
            out.append(["zoneID": db.zoneID(n).json, "deleted": true])
        }
        inv.emit(["zones": .array(out)], listKey: "zones")
        return ExitCode.success
    }

    static let list: Command = Command(["zone", "list"], synopsis: "", summary: "List the zones of a database") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let db = try inv.database()
        inv.emit(["zones": .array(try db.listZones().map { try db.zoneJSON($0) })], listKey: "zones")
        return ExitCode.success
    }
}
