/// Where an environment's schema lives: `<container>/<env>/schema.ckdb`, in the schema
/// language itself (readable and diffable), headed by a `schemaVersion` comment; absent means
/// the initial schema (only `Users`). Changes are made under `schema.lock`.
public struct SchemaStore {
    public let paths: DataPaths
    public let container: String
    public let environment: Environment

    public init(paths: DataPaths, container: String, environment: Environment) {
        self.paths = paths
        self.container = container
        self.environment = environment
    }

    var file: String { paths.environment(container, environment) + "/schema.ckdb" }
    var lockFile: String { paths.environment(container, environment) + "/schema.lock" }
    static let header = "// ck schema, schemaVersion \(DataPaths.schemaVersion): the CloudKit schema language (cktool export-schema layout)\n"

    public func load() throws -> Schema {
        guard let b = try FileSystem.read(file) else { return .initial }
        do { return try SchemaParser.parse(String(decoding: b, as: UTF8.self)) } catch let e as CloudKitError {
            throw CloudKitError.internalError("damaged schema file '\(file)': \(e.reason)")
        }
    }

    @discardableResult
    func save(_ s: Schema) throws -> [UInt8] {
        let bytes = Array((SchemaStore.header + SchemaPrinter.print(s)).utf8)
        try FileSystem.writeAtomically(file, bytes)
        return bytes
    }

    func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        return try body()
    }

    /// Folds just-in-time additions into the stored schema, refusing if another process defined
    /// one of the same fields with another type meanwhile. Returns how to take them out again
    /// (for a commit that then fails), or nil if nothing changed.
    func merge(_ additions: Schema) throws -> (() throws -> Void)? {
        try withLock {
            var s = try load()
            var changed = false
            for (name, t) in additions.types {
                guard var have = s.types[name] else { s.types[name] = t; changed = true; continue }
                for (fname, f) in t.fields where !RecordTypeSchema.isSystemField(fname) {
                    if let old = have.fields[fname] {
                        if old.type != f.type { throw SchemaRules.typeMismatch(field: fname, type: name, stored: old.type, given: f.type.description) }
                        continue
                    }
                    have.fields[fname] = f
                    changed = true
                }
                s.types[name] = have
            }
            guard changed else { return nil }
            // The old schema stays reachable by a second link, so taking the additions out
            // again is a rename, which a full disk cannot refuse.
            let env = try Directory.open(paths.environment(container, environment), create: true)!
            let hadSchema = env.kind(of: "schema.ckdb") != nil
            try env.remove(SchemaStore.undoName)
            if hadSchema { try env.link("schema.ckdb", as: SchemaStore.undoName) }
            let after: [UInt8]
            do { after = try save(s) } catch {
                try? env.remove(SchemaStore.undoName)
                throw error
            }
            return {
                try self.withLock {
                    // Only if no other process changed the schema since.
                    guard try FileSystem.read(self.file) == after else { try env.remove(SchemaStore.undoName); return }
                    if hadSchema { try env.rename(SchemaStore.undoName, to: "schema.ckdb") } else { try env.remove("schema.ckdb") }
                }
            }
        }
    }

    static let undoName = ".schema-undo.ckdb"

    /// Drops the old schema a merge kept for taking its additions out (once the commit stands).
    func forgetUndo() {
        try? Directory.open(paths.environment(container, environment))?.remove(SchemaStore.undoName)
    }
}
