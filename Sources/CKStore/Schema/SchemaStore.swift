import CKModel

/// Where an environment's schema lives: `<container>/<env>/schema.ckdb`, in the schema
/// language itself (readable and diffable), headed by a `schemaVersion` comment; absent means
/// the initial schema (only `Users`). Changes are made under `schema.lock`.
package struct SchemaStore {
    package let paths: DataPaths
    package let container: String
    package let environment: Environment

    package init(paths: DataPaths, container: String, environment: Environment) {
        self.paths = paths
        self.container = container
        self.environment = environment
    }

    package var file: String { paths.environment(container, environment) + "/schema.ckdb" }
    var lockFile: String { paths.environment(container, environment) + "/schema.lock" }
    package static let header = "// ck schema, schemaVersion \(FileFormat.schemaVersion): the CloudKit schema language (cktool export-schema layout)\n"

    /// The schema, parsed once per version of the file (every write reads it: `ck serve` asks
    /// thousands of times a second).
    package func load() throws -> Schema {
        if let s = try StampedFiles.shared.value(file, { try parse() }) { return s }
        return try parse()
    }

    private func parse() throws -> Schema {
        guard let b = try FileSystem.read(file) else { return .initial }
        do { return try SchemaParser.parse(String(decoding: b, as: UTF8.self)) } catch let e as CloudKitError {
            throw CloudKitError.internalError("damaged schema file '\(file)': \(e.reason)")
        }
    }

    /// The file's bytes for a schema.
    package func bytes(of s: Schema) -> [UInt8] { Array((SchemaStore.header + SchemaPrinter.print(s)).utf8) }

    @discardableResult
    package func save(_ s: Schema) throws -> [UInt8] {
        let b = bytes(of: s)
        try FileSystem.writeAtomically(file, b)
        return b
    }

    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        return try body()
    }

    /// Folds just-in-time additions into the stored schema, refusing if another process defined
    /// one of the same fields with another type meanwhile. They are not taken out again if the
    /// write that defined them then fails: another writer may already rely on them, and a
    /// type or field no record uses yet is harmless (as in CloudKit's development schema).
    package func merge(_ additions: Schema) throws {
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
            if changed { try save(s) }
        }
    }
}
