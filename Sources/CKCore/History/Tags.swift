/// `ck tag`: a named point across every zone of the data directory, as a git tag names a commit
/// (Dolt's commits): `tags/<name>.json` holds, for each zone that had a history when it was
/// made, the zone's directory (below the data directory), its incarnation and the sequence
/// number of its head then. A zone made later stands, as of the tag, at its empty start.
public struct Tag: Sendable {
    public struct Point: Sendable {
        /// The zone's directory, relative to the data directory.
        public var zone: String
        public var incarnation: String
        public var seq: Int64
    }

    public var name: String
    public var message: String?
    public var created: Int64
    public var points: [Point]

    public func point(ofZoneAt relative: String) -> Point? { points.first { $0.zone.sameBytes(relative) } }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(name), "created": .int(created),
            "zones": .array(points.map { ["zone": .string($0.zone), "incarnation": .string($0.incarnation), "seq": .int($0.seq)] }),
        ]
        if let m = message { o["message"] = .string(m) }
        return .object(o)
    }

    init(json j: JSONValue) throws {
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

    init(name: String, message: String?, created: Int64, points: [Point]) {
        self.name = name
        self.message = message
        self.created = created
        self.points = points
    }
}

public struct TagStore {
    public let paths: DataPaths
    public init(paths: DataPaths) { self.paths = paths }

    var directory: String { paths.root + "/tags" }
    func file(_ name: String) -> String { directory + "/" + PathEncoding.component(name) + ".json" }

    /// A tag name must not read as another kind of reference (a number, `Z@N`, a token, a time).
    public static func validate(_ name: String) throws {
        try Names.validateName(name, noun: "tag name")
        guard case .tag = try HistoryReference.parse(name, now: 0, timeZone: nil) else {
            throw CloudKitError.badRequest("tag name '\(Names.describe(name))' would read as a sequence number, a change token or a time; choose another")
        }
    }

    public func load(_ name: String) throws -> Tag {
        try Names.validateName(name, noun: "tag name")
        guard let j = try FileSystem.readJSON(file(name)) else {
            throw CloudKitError(.notFound, "unknown tag or reference '\(Names.describe(name))' (not a change token, ZONE@SEQ, time or tag; 'ck tag list' shows the tags)")
        }
        return try Tag(json: j)
    }

    /// Makes a tag at the head of every zone now; EXISTS when the name is taken.
    public func create(_ name: String, message: String?, now: Int64) throws -> Tag {
        try TagStore.validate(name)
        var points: [Tag.Point] = []
        for zone in try zoneDirectories() {
            guard let zj = try FileSystem.readJSON(zone + "/zone.json"), let inc = zj["incarnation"]?.stringValue else { continue }
            points.append(Tag.Point(zone: String(zone.dropFirst(paths.root.count + 1)), incarnation: inc,
                                    seq: try ChangeHistory(directory: zone).head()))
        }
        points.sort { NameKey($0.zone) < NameKey($1.zone) }
        let tag = Tag(name: name, message: message, created: now, points: points)
        var doc = tag.json.objectValue!
        doc["schemaVersion"] = .int(DataPaths.schemaVersion)
        try FileSystem.makeDirectories(directory)
        guard try FileSystem.createExclusively(file(name), Array(JSONWriter.pretty(.object(doc)).utf8)) else {
            throw CloudKitError(.exists, "tag '\(Names.describe(name))' already exists (delete it first with 'ck tag delete')")
        }
        return tag
    }

    public func list() throws -> [Tag] {
        var out: [Tag] = []
        for f in try FileSystem.list(directory) where f.hasSuffix(".json") && !f.hasPrefix(".") {
            guard let j = try FileSystem.readJSON(directory + "/" + f) else { continue }
            out.append(try Tag(json: j))
        }
        return out.sorted { NameKey($0.name) < NameKey($1.name) }
    }

    public func delete(_ name: String) throws -> Tag {
        let t = try load(name)
        try FileSystem.remove(file(name))
        return t
    }

    /// Every zone directory of the data directory: containers, environments, databases.
    func zoneDirectories() throws -> [String] {
        var out: [String] = []
        let containers = paths.root + "/containers"
        for c in try FileSystem.list(containers) where !c.hasPrefix(".") {
            for env in ["development", "production"] {
                let e = containers + "/" + c + "/" + env
                var databases = [e + "/public"]
                for scope in ["private", "shared"] {
                    for u in try FileSystem.list(e + "/" + scope) where !u.hasPrefix(".") { databases.append(e + "/" + scope + "/" + u) }
                }
                for db in databases {
                    for z in try FileSystem.list(db + "/zones") where !z.hasPrefix(".") { out.append(db + "/zones/" + z) }
                }
            }
        }
        return out
    }
}
