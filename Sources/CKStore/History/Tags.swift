import CKJSON
import CKModel

/// `ck tag`: a named point across every zone of one database, as a git tag names a commit
/// (Dolt's commits). A tag lives in its owner's database, `<database>/tags/<name>.json`, and
/// holds, for each of the database's zones that had a history when it was made, the zone's
/// directory (below the data directory), its incarnation and the sequence number of its head
/// then. A zone made later stands, as of the tag, at its empty start.
package struct Tag: Sendable {
    package struct Point: Sendable {
        /// The zone's directory, relative to the data directory.
        package var zone: String
        package var incarnation: String
        package var seq: Int64
    }

    package var name: String
    package var message: String?
    package var created: Int64
    package var points: [Point]

    package func point(ofZoneAt relative: String) -> Point? { points.first { $0.zone.sameBytes(relative) } }

    package var json: JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(name), "created": .int(created),
            "zones": .array(points.map { ["zone": .string($0.zone), "incarnation": .string($0.incarnation), "seq": .int($0.seq)] }),
        ]
        if let m = message { o["message"] = .string(m) }
        return .object(o)
    }

    package init(json j: JSONValue) throws {
        guard let n = j["name"]?.stringValue, let c = j["created"]?.int64Value, let zs = j["zones"]?.arrayValue else {
            throw CloudKitError.internalError("tag file is damaged (name, created, zones)")
        }
        name = n
        created = c
        message = j["message"]?.stringValue
        points = try zs.map {
            guard let z = $0["zone"]?.stringValue, let i = $0["incarnation"]?.stringValue, let s = $0["seq"]?.int64Value else {
                throw CloudKitError.internalError("tag '\(n)' is damaged (a zone entry lacks zone, incarnation or seq)")
            }
            return Point(zone: z, incarnation: i, seq: s)
        }
    }

    package init(name: String, message: String?, created: Int64, points: [Point]) {
        self.name = name
        self.message = message
        self.created = created
        self.points = points
    }
}

/// The tags of one database: `<database>/tags/<name>.json`. The public database and each
/// user's private database have their own; the shared database has none (its zones, and their
/// histories, are their owners').
package struct TagStore {
    package let paths: DataPaths
    /// The database's directory.
    package let database: String

    package var directory: String { database + "/tags" }
    package func file(_ name: String) -> String { directory + "/" + PathEncoding.component(name) + ".json" }

    /// A tag name must not read as another kind of reference (a number, `Z@N`, a token, a time).
    package static func validate(_ name: String) throws {
        try Names.validateName(name, noun: "tag name")
        guard case .tag = try HistoryReference.parse(name, now: 0, timeZone: nil) else {
            throw CloudKitError.badRequest("tag name '\(Names.describe(name))' would read as a sequence number, a change token or a time; choose another")
        }
    }

    package func load(_ name: String) throws -> Tag {
        try Names.validateName(name, noun: "tag name")
        guard let j = try FileSystem.readJSON(file(name)) else {
            throw CloudKitError(.notFound, "unknown tag or reference '\(Names.describe(name))' (not a change token, ZONE@SEQ, time or tag of this database)").with(.listTags)
        }
        return try Tag(json: j)
    }

    /// Makes a tag at the head of every zone of the database now; EXISTS when the name is taken.
    package func create(_ name: String, message: String?, now: Int64) throws -> Tag {
        try TagStore.validate(name)
        var points: [Tag.Point] = []
        let zones = database + "/zones"
        for z in try FileSystem.list(zones) where !z.hasPrefix(".") {
            let zone = zones + "/" + z
            guard let zj = try FileSystem.readJSON(zone + "/zone.json"), let inc = zj["incarnation"]?.stringValue else { continue }
            points.append(Tag.Point(zone: String(zone.dropFirst(paths.root.count + 1)), incarnation: inc,
                                    seq: try ChangeHistory(directory: zone).head()))
        }
        points.sort { NameKey($0.zone) < NameKey($1.zone) }
        let tag = Tag(name: name, message: message, created: now, points: points)
        guard try TagStore.write(tag, to: file(name)) else {
            throw CloudKitError(.exists, "tag '\(Names.describe(name))' already exists").with(.deleteTagFirst(name))
        }
        return tag
    }

    /// Writes a new tag file; false when one is there.
    package static func write(_ tag: Tag, to file: String) throws -> Bool {
        var doc = tag.json.objectValue!
        doc["schemaVersion"] = .int(FileFormat.schemaVersion)
        return try FileSystem.createExclusively(file, Array(JSONWriter.pretty(.object(doc)).utf8))
    }

    package func list() throws -> [Tag] {
        var out: [Tag] = []
        for f in try FileSystem.list(directory) where f.hasSuffix(".json") && !f.hasPrefix(".") {
            guard let j = try FileSystem.readJSON(directory + "/" + f) else { continue }
            out.append(try Tag(json: j))
        }
        return out.sorted { NameKey($0.name) < NameKey($1.name) }
    }

    package func delete(_ name: String) throws -> Tag {
        let t = try load(name)
        try FileSystem.remove(file(name))
        return t
    }
}

extension TagStore {
    /// The tags of database `db`, after moving any tags of an earlier data directory into the
    /// databases they belong to (LegacyTags). The shared database has none: ACCESS_DENIED.
    package init(of db: Database) throws {
        if db.scope == .shared {
            var e = CloudKitError(.accessDenied, "tags are kept by the owner of a zone, in their own database: the shared database has none (its zones and their histories belong to the users who shared them)")
            e.database = .shared
            throw e
        }
        try LegacyTags.migrate(db.paths)
        self.init(paths: db.paths, database: db.directory)
    }
}

/// Tags of an earlier data directory: `<data dir>/tags/<name>.json`, one point per zone of
/// every database. On first use each moves, under a lock, into every database whose zones it
/// names, holding that database's points only (`<database>/tags/<name>.json`); a tag that named
/// no zone (made before any zone had a history) named no database, and goes. A file that does
/// not read as a tag, or names a zone outside any database, is left where it is. Moving is
/// idempotent: a crash half-way is finished by the next use.
enum LegacyTags {
    package static func directory(_ paths: DataPaths) -> String { paths.root + "/tags" }

    static func migrate(_ paths: DataPaths) throws {
        let dir = directory(paths)
        guard try FileSystem.isDirectory(dir) else { return }
        // The lock lives in the directory it guards, so nothing is left behind when it goes.
        guard let lock = try FileLock.acquire(dir + "/.migrate.lock", createDirectory: false) else { return }
        defer { lock.unlock() }
        var left = 0
        for f in try FileSystem.list(dir) where !f.hasPrefix(".") {
            guard f.hasSuffix(".json"), let moved = try? move(dir + "/" + f, paths), moved else { left += 1; continue }
            try FileSystem.remove(dir + "/" + f)
        }
        try FileSystem.remove(dir + "/.migrate.lock")
        if left == 0, let (parent, leaf) = try Directory.parent(of: dir) { parent.removeIfEmpty(leaf) }
    }

    /// Writes the tag in `file` into each database it names; false when it cannot be read.
    private static func move(_ file: String, _ paths: DataPaths) throws -> Bool {
        guard let j = try FileSystem.readJSON(file), let tag = try? Tag(json: j), (try? Names.validateName(tag.name, noun: "tag name")) != nil else { return false }
        var byDatabase: [String: [Tag.Point]] = [:]
        for p in tag.points {
            guard let db = database(ofZone: p.zone) else { return false }
            byDatabase[db, default: []].append(p)
        }
        for (db, points) in byDatabase.sorted(by: { $0.key < $1.key }) {
            let home = paths.root + "/" + db
            // Only into a database that is there: a tag never makes one.
            guard try Directory.open(home) != nil else { continue }
            let file = TagStore(paths: paths, database: home).file(tag.name)
            // A copy there already was moved by an earlier try (or made since): it stays.
            _ = try TagStore.write(Tag(name: tag.name, message: tag.message, created: tag.created, points: points), to: file)
        }
        return true
    }

    /// The database directory (below the data directory) a zone directory lies in:
    /// `containers/<c>/<environment>/public` or `…/private/<user>`; nil for anything else.
    package static func database(ofZone zone: String) -> String? {
        let parts = zone.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), parts.count >= 6, parts[0] == "containers",
              ["development", "production"].contains(parts[2]) else { return nil }
        switch parts[3] {
        case "public" where parts.count == 6 && parts[4] == "zones": return parts[0..<4].joined(separator: "/")
        case "private" where parts.count == 7 && parts[5] == "zones": return parts[0..<5].joined(separator: "/")
        default: return nil
        }
    }
}
