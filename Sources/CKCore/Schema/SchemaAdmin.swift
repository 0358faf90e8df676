/// The developer's side of the schema: deploy development to production, import and export
/// the schema language, reset development, and assign custom roles to users. Reached through
/// the API (API/Schema).
struct SchemaAdmin {
    let paths: DataPaths
    let container: String

    init(paths: DataPaths, container: String) {
        self.paths = paths
        self.container = container
    }

    func store(_ e: Environment) -> SchemaStore { SchemaStore(paths: paths, container: container, environment: e) }

    /// Why replacing `old` (production) by `new` would lose data or change types, if it would:
    /// production is additive only.
    static func loss(from old: Schema, to new: Schema) -> String? {
        for (name, t) in old.types.sorted(by: { $0.key < $1.key }) {
            guard let n = new.types[name] else { return "record type '\(name)' exists in production and cannot be removed" }
            for (fname, f) in t.fields.sorted(by: { $0.key < $1.key }) where !RecordTypeSchema.isSystemField(fname) {
                guard let nf = n.fields[fname] else { return "field '\(fname)' of record type '\(name)' exists in production and cannot be removed" }
                if nf.type != f.type { return "field '\(fname)' of record type '\(name)' is \(f.type) in production and cannot become \(nf.type)" }
            }
        }
        for r in old.roles.sorted() where !new.roles.contains(r) { return "role '\(r)' exists in production and cannot be removed" }
        return nil
    }

    struct DeployResult {
        var typesAdded: [String]
        var fieldsAdded: [String]
    }

    /// Promotes the development schema to production, additively; refuses (changing nothing)
    /// when it would remove or retype anything production has.
    func deploy() throws -> DeployResult {
        let dev = try store(.development).load()
        return try store(.production).withLock {
            let prod = try store(.production).load()
            if let why = SchemaAdmin.loss(from: prod, to: dev) {
                throw CloudKitError.badRequest("cannot deploy: \(why); the development schema must keep everything production has")
            }
            var types: [String] = [], fields: [String] = []
            for (name, t) in dev.types.sorted(by: { $0.key < $1.key }) {
                guard let p = prod.types[name] else { types.append(name); continue }
                for f in t.userFields where p.fields[f.name] == nil { fields.append("\(name).\(f.name)") }
            }
            if dev != prod { try store(.production).save(dev) }
            return DeployResult(typesAdded: types, fieldsAdded: fields)
        }
    }

    /// Checks a schema-language text against production and, unless `validateOnly`, makes it
    /// the development schema.
    @discardableResult
    func importSchema(_ text: String, validateOnly: Bool) throws -> Schema {
        let new = try SchemaParser.parse(text)
        let prod = try store(.production).load()
        if let why = SchemaAdmin.loss(from: prod, to: new) {
            throw CloudKitError.badRequest("cannot import: \(why)")
        }
        if !validateOnly { _ = try store(.development).withLock { try store(.development).save(new) } }
        return new
    }

    /// Resets development to production's schema and deletes every development record,
    /// subscription, notification and bookmark of the container — all or nothing: it holds the
    /// environment's lock exclusively and writes `reset.json` first, so a reset a crash
    /// interrupts is finished by whoever next uses the environment.
    func resetDevelopment() throws {
        let g = EnvironmentGuard(paths: paths, container: container, environment: .development)
        let lock = try FileLock(path: g.lockFile, .exclusive)
        defer { lock.unlock() }
        // Everything the reset will touch must be reachable without a link, and everything that
        // needs space is made first: once reset.json exists the reset only renames and removes,
        // which a full disk cannot refuse.
        for device in try FileSystem.list(paths.root + "/devices") where !device.hasPrefix(".") {
            _ = try Directory.open(bookmarks(device: device))
        }
        let env = try Directory.open(g.directory, create: true)!
        let madeTrash = env.kind(of: SchemaAdmin.resetTrash) == nil
        var schema: String?
        do {
            _ = try env.subdirectory(SchemaAdmin.resetTrash, create: true)
            schema = try env.prepare(store(.development).bytes(of: try store(.production).load()), durable: true)
            try env.writeJSON("reset.json", ["schemaVersion": .int(DataPaths.schemaVersion), "reset": "development"])
        } catch {
            if let t = schema { env.discard(t) }
            if madeTrash { env.removeIfEmpty(SchemaAdmin.resetTrash) }
            throw error
        }
        try completeReset(preparedSchema: schema)
    }

    static let resetTrash = ".reset-trash"

    private func bookmarks(device: String) -> String {
        paths.root + "/devices/" + device + "/bookmarks/" + PathEncoding.component(container) + "/development"
    }

    /// The steps of a reset, each one idempotent. The caller holds the environment's lock
    /// exclusively and `reset.json` exists. `preparedSchema` is the new schema, written to a
    /// temporary file beside it (when finishing an interrupted reset, it is written here).
    func completeReset(preparedSchema: String? = nil) throws {
        let g = EnvironmentGuard(paths: paths, container: container, environment: .development)
        guard let env = try Directory.open(g.directory) else { return }
        // Everything goes to one trash directory, one rename each, then the trash is emptied.
        let trash = try env.subdirectory(SchemaAdmin.resetTrash, create: true)!
        for d in ["public", "private", "shared", "notifications", "roles.json"] where env.kind(of: d) != nil {
            try trash.removeTree(d)
            try env.move(d, to: trash, as: d)
        }
        env.sync()
        for device in try FileSystem.list(paths.root + "/devices") where !device.hasPrefix(".") {
            try FileSystem.removeTree(bookmarks(device: device))
        }
        let schema = try preparedSchema ?? env.prepare(store(.development).bytes(of: try store(.production).load()), durable: true)
        try store(.development).withLock { try env.publish(schema, as: "schema.ckdb") }
        try env.removeTree(SchemaAdmin.resetTrash)
        try env.remove("reset.json")
        env.sync()
    }

    // MARK: roles

    func rolesFile(_ e: Environment) -> String { paths.environment(container, e) + "/roles.json" }

    /// Role → user record names.
    func roleMembers(_ e: Environment) throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        for (k, v) in try StampedFiles.shared.readJSON(rolesFile(e))?["members"]?.objectValue ?? [:] {
            out[k] = (v.arrayValue ?? []).compactMap(\.stringValue)
        }
        return out
    }

    func roles(of user: String, _ e: Environment) throws -> Set<String> {
        Set(try roleMembers(e).filter { $0.value.contains(user) }.keys)
    }

    /// Adds a user to a custom role (or removes them), as the CloudKit console does.
    func setRole(_ role: String, user: String, member: Bool, _ e: Environment) throws {
        guard try store(e).load().roles.contains(role) else {
            throw CloudKitError.badRequest("role '\(role)' is not defined in the \(e.rawValue) schema (CREATE ROLE \(role) in a schema import, then deploy)")
        }
        try store(e).withLock {
            var m = try roleMembers(e)
            var set = Set(m[role] ?? [])
            if member { set.insert(user) } else { set.remove(user) }
            m[role] = set.sorted()
            try FileSystem.writeJSON(rolesFile(e), ["schemaVersion": .int(DataPaths.schemaVersion),
                                                     "members": .object(m.mapValues { .array($0.map(JSONValue.string)) })])
        }
    }
}
