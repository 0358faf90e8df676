import CKCrypto
import CKJSON
import CKModel

/// The developer's side of the schema: deploy development to production, import and export
/// the schema language, reset development, and assign custom roles to users. Reached through
/// the API (API/Schema).
package struct SchemaAdmin {
    package let paths: DataPaths
    package let container: String

    package init(paths: DataPaths, container: String) {
        self.paths = paths
        self.container = container
    }

    package func store(_ e: Environment) -> SchemaStore { SchemaStore(paths: paths, container: container, environment: e) }

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

    package struct DeployResult {
        package var typesAdded: [String]
        package var fieldsAdded: [String]
        /// The development schema deployed (or previewed), as the SHA-256 of its text: what a
        /// confirmation names so that what it deploys is what the preview showed.
        package var development: String
    }

    /// Promotes the development schema to production, additively; refuses (changing nothing)
    /// when it would remove or retype anything production has, or (CONFLICT) when
    /// `ifDevelopment` names a development schema other than the one there now.
    /// `dryRun`: what a deploy would add, with nothing written.
    package func deploy(dryRun: Bool = false, ifDevelopment: String? = nil) throws -> DeployResult {
        let dev = try store(.development).load()
        let fingerprint = SHA256.hex(store(.development).bytes(of: dev))
        if let expected = ifDevelopment, expected != fingerprint {
            throw CloudKitError(.conflict, "the development schema changed since the preview: preview again")
        }
        func plan(_ prod: Schema) throws -> DeployResult {
            if let why = SchemaAdmin.loss(from: prod, to: dev) {
                throw CloudKitError.badRequest("cannot deploy: \(why); the development schema must keep everything production has")
            }
            var types: [String] = [], fields: [String] = []
            for (name, t) in dev.types.sorted(by: { $0.key < $1.key }) {
                guard let p = prod.types[name] else { types.append(name); continue }
                for f in t.userFields where p.fields[f.name] == nil { fields.append("\(name).\(f.name)") }
            }
            return DeployResult(typesAdded: types, fieldsAdded: fields, development: fingerprint)
        }
        // A preview reads production without its lock, which would make its directory.
        if dryRun { return try plan(try store(.production).load()) }
        return try store(.production).withLock {
            let prod = try store(.production).load()
            let r = try plan(prod)
            if dev != prod { try store(.production).save(dev) }
            return r
        }
    }

    /// Checks a schema-language text against production and, unless `validateOnly`, makes it
    /// the development schema.
    @discardableResult
    package func importSchema(_ text: String, validateOnly: Bool) throws -> Schema {
        let new = try SchemaParser.parse(text)
        let prod = try store(.production).load()
        if let why = SchemaAdmin.loss(from: prod, to: new) {
            throw CloudKitError.badRequest("cannot import: \(why)")
        }
        // No write commits while the data is checked and the schema replaced (writers hold the
        // environment's lock shared); a check alone creates nothing.
        let g = EnvironmentGuard(paths: paths, container: container, environment: .development)
        let lock = validateOnly ? try FileLock.acquireExisting(g.lockFile, .shared) : try FileLock(path: g.lockFile, .exclusive)
        defer { lock?.unlock() }
        if let why = try retypedData(from: try store(.development).load(), to: new) {
            throw CloudKitError.badRequest("cannot import: \(why)")
        }
        if !validateOnly { _ = try store(.development).withLock { try store(.development).save(new) } }
        return new
    }

    /// Why `new` cannot replace the development schema `old` for the data development holds:
    /// a field `new` retypes (CloudKit never changes the type of an existing field) while a
    /// record holds a value of it the new type does not take — every later save of that record
    /// would fail. Only retyped fields are looked for, and the first such record answers.
    private func retypedData(from old: Schema, to new: Schema) throws -> String? {
        var retyped: [String: [String: SchemaType]] = [:]
        for (name, t) in old.types {
            guard let n = new.types[name] else { continue }
            for (fname, f) in t.fields where !RecordTypeSchema.isSystemField(fname) {
                if let nf = n.fields[fname], nf.type != f.type { retyped[name, default: [:]][fname] = nf.type }
            }
        }
        guard !retyped.isEmpty else { return nil }
        let env = paths.environment(container, .development)
        var databases: [(String, String, String)] = [(env + "/public", "_", "public")]
        for owner in try FileSystem.list(env + "/private").sorted() where !owner.hasPrefix(".") {
            databases.append((env + "/private/" + owner, owner, "private"))
        }
        for (dir, owner, scope) in databases {
            for entry in try FileSystem.list(dir + "/zones").sorted() where !entry.hasPrefix(".") {
                guard let name = try? FileSystem.readJSON(dir + "/zones/" + entry + "/zone.json")?["zoneID"]?["zoneName"]?.stringValue,
                      case .present(let z) = try ZoneStore.load(directory: dir + "/zones/" + entry, zoneID: ZoneID(zoneName: name, ownerRecordName: owner)) else { continue }
                var found: String?
                try z.snapshot().forEachRecord { r in
                    guard let fields = retyped[r.recordType] else { return true }
                    for (fname, type) in fields.sorted(by: { $0.key < $1.key }) {
                        if let v = r.fields[fname], !type.accepts(v.type) {
                            found = "field '\(fname)' of record type '\(r.recordType)' holds \(v.type) values (record '\(Names.describe(r.recordName))' in zone '\(Names.describe(name))' of the \(scope) database) and cannot become \(type); CloudKit does not change the type of an existing field: add a field with another name, or delete those values first"
                            return false
                        }
                    }
                    return true
                }
                if let f = found { return f }
            }
        }
        return nil
    }

    /// Resets development to production's schema and deletes every development record,
    /// subscription, notification and bookmark of the container — all or nothing: it holds the
    /// environment's lock exclusively and writes `reset.json` first, so a reset a crash
    /// interrupts is finished by whoever next uses the environment.
    package func resetDevelopment() throws {
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
            try env.writeJSON("reset.json", ["schemaVersion": .int(FileFormat.schemaVersion), "reset": "development"])
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

    /// `roles.json`, changed under the schema's lock: role → user record names.
    private func roles(_ e: Environment) -> LockedDocument<[String: [String]]> {
        LockedDocument(rolesFile(e), lock: store(e).lockFile, decode: { j in
            var out: [String: [String]] = [:]
            for (k, v) in j?["members"]?.objectValue ?? [:] { out[k] = (v.arrayValue ?? []).compactMap(\.stringValue) }
            return out
        }, encode: { m in
            ["schemaVersion": .int(FileFormat.schemaVersion), "members": .object(m.mapValues { .array($0.map(JSONValue.string)) })]
        })
    }

    /// Role → user record names.
    package func roleMembers(_ e: Environment) throws -> [String: [String]] { try roles(e).read() }

    package func roles(of user: String, _ e: Environment) throws -> Set<String> {
        Set(try roleMembers(e).filter { $0.value.contains(user) }.keys)
    }

    /// Adds a user to a custom role (or removes them), as the CloudKit console does.
    package func setRole(_ role: String, user: String, member: Bool, _ e: Environment) throws {
        guard try store(e).load().roles.contains(role) else {
            throw CloudKitError.badRequest("role '\(role)' is not defined in the \(e.rawValue) schema (CREATE ROLE \(role) in a schema import, then deploy)")
        }
        try roles(e).update { m in
            var set = Set(m[role] ?? [])
            if member { set.insert(user) } else { set.remove(user) }
            m[role] = set.sorted()
        }
    }
}
