import Foundation

/// Addresses one database: container, environment, scope.
public struct DatabaseAddress: Sendable {
    public var container: String
    public var environment: Environment
    public var scope: DatabaseScope

    public init(container: String, environment: Environment, scope: DatabaseScope) {
        self.container = container
        self.environment = environment
        self.scope = scope
    }
}

/// One database as seen by one caller: its zones and what the caller may do in it.
public final class Database {
    public let address: DatabaseAddress
    public let caller: Caller
    public let paths: DataPaths
    let clock: Clock
    public let directory: String

    init(address: DatabaseAddress, caller: Caller, paths: DataPaths, clock: Clock) throws {
        try Names.validateContainerID(address.container)
        self.address = address
        self.caller = caller
        self.paths = paths
        self.clock = clock
        self.directory = paths.database(address.container, address.environment, address.scope, user: caller.user?.userRecordName)
    }

    var scope: DatabaseScope { address.scope }

    private var cachedSchema: Schema?
    private var cachedRoles: Set<String>?

    public var schemaAdmin: SchemaAdmin { SchemaAdmin(paths: paths, container: address.container) }

    /// The environment's schema, read once per command.
    public func schema() throws -> Schema {
        if let s = cachedSchema { return s }
        let s = try schemaAdmin.store(address.environment).load()
        cachedSchema = s
        return s
    }

    /// The caller's custom roles in this environment (public-database GRANTs).
    func callerRoles() throws -> Set<String> {
        if let r = cachedRoles { return r }
        let r = try caller.user.map { try schemaAdmin.roles(of: $0.userRecordName, address.environment) } ?? []
        cachedRoles = r
        return r
    }

    /// Whether the caller may read a record: always outside the public database; there, as the
    /// record type's GRANTs say.
    public func canRead(_ r: Record) throws -> Bool {
        guard scope == .public else { return true }
        return SchemaRules.permits(.read, type: try schema().types[r.recordType], user: caller.user, roles: try callerRoles(),
                                   creator: r.created.userRecordName)
    }
    public var assets: AssetStore { AssetStore(paths: paths) }

    /// Reading the public database needs no account; everything else needs an available one.
    public func requireRead() throws {
        if scope != .public { _ = try caller.requireUser(for: "reading the \(scope.rawValue) database") }
    }

    @discardableResult
    public func requireWrite() throws -> UserAccount {
        try caller.requireUser(for: "writing to the \(scope.rawValue) database")
    }

    var ownerRecordName: String {
        scope == .public ? ZoneID.defaultOwner : (caller.user?.userRecordName ?? ZoneID.defaultOwner)
    }

    public func zoneID(_ name: String) -> ZoneID { ZoneID(zoneName: name, ownerRecordName: ownerRecordName) }

    func zoneStore(_ name: String) -> ZoneStore {
        ZoneStore(directory: DataPaths.zone(database: directory, zoneName: name), zoneID: zoneID(name))
    }

    /// A zone that exists, for reading or writing records.
    public func zone(_ name: String) throws -> ZoneStore {
        try Names.validateZoneName(name)
        try requireRead()
        let z = zoneStore(name)
        if name == ZoneID.defaultZoneName {
            if scope == .shared {
                throw CloudKitError(.zoneNotFound, "the shared database has no default zone; its zones are other users' shared zones", zoneID: z.zoneID)
            }
            return z
        }
        guard z.existsOnDisk else {
            throw CloudKitError(.zoneNotFound, "zone '\(name)' does not exist in the \(scope.rawValue) database", zoneID: z.zoneID)
        }
        return z
    }

    // MARK: zones

    /// The Web Services zone dictionary.
    public func zoneJSON(_ z: ZoneStore) -> JSONValue {
        ["zoneID": z.zoneID.json, "atomic": .bool(!z.zoneID.isDefault)]
    }

    public func listZones() throws -> [ZoneStore] {
        try requireRead()
        var out: [ZoneStore] = []
        if scope != .shared { out.append(zoneStore(ZoneID.defaultZoneName)) }
        let dir = directory + "/zones"
        var names: [String] = []
        for entry in try FileSystem.list(dir) where !entry.hasPrefix(".") {
            guard let j = try FileSystem.readJSON(dir + "/" + entry + "/zone.json"), let n = j["zoneID"]?["zoneName"]?.stringValue else { continue }
            if n != ZoneID.defaultZoneName { names.append(n) }
        }
        out += names.sorted().map(zoneStore)
        return out
    }

    var lockFile: String { directory + "/lock" }

    /// Creates custom zones (only in the private database, as CloudKit). Creating a zone that
    /// exists returns it unchanged, like saving a CKRecordZone again.
    public func createZone(_ name: String) throws -> ZoneStore {
        try Names.validateZoneName(name)
        try requireWrite()
        switch scope {
        case .public: throw CloudKitError(.badRequest, "custom zones cannot be created in the public database; it has only _defaultZone", zoneID: zoneID(name))
        case .shared: throw CloudKitError(.badRequest, "zones cannot be created in the shared database; it shows zones other users share with you", zoneID: zoneID(name))
        case .private: break
        }
        if name == ZoneID.defaultZoneName { return zoneStore(name) }
        let z = zoneStore(name)
        try FileSystem.makeDirectories(directory)
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        if !z.existsOnDisk {
            let count = try listZones().count
            if count >= 1000 { throw CloudKitError(.limitExceeded, "a database holds at most 1000 zones", zoneID: z.zoneID) }
            try z.create(timestamp: clock.now())
            try appendZoneChangeLocked(name, op: "create")
            try deliverZoneEvent(name)
        }
        return z
    }

    /// Deletes a custom zone and every record in it.
    public func deleteZone(_ name: String) throws {
        try Names.validateZoneName(name)
        try requireWrite()
        if name == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "the default zone cannot be deleted", zoneID: zoneID(name))
        }
        if scope == .public {
            throw CloudKitError(.badRequest, "the public database has no custom zones to delete", zoneID: zoneID(name))
        }
        let z = try zone(name)
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        // Hold the zone lock too, so no writer is half-way through the zone while it goes.
        try z.withLock {
            let trash = directory + "/zones/.deleted-" + Identifiers.hex((0..<8).map { _ in UInt8.random(in: 0...255) })
            if rename(z.directory, trash) != 0 { throw CloudKitError.internalError("cannot delete zone '\(name)': \(String(cString: strerror(errno)))") }
            FileSystem.syncDirectory(directory + "/zones")
            try appendZoneChangeLocked(name, op: "delete")
            try FileSystem.removeTree(trash)
        }
        try deliverZoneEvent(name)
    }

    // MARK: records

    /// Applies a `records/modify` request to one zone: operations in order, one result each.
    /// In a custom zone an atomic request applies all or nothing (ATOMIC_ERROR for the others).
    public func modify(zone name: String, operations: [RecordOperation], atomic: Bool = true,
                       assets pending: [String: [UInt8]] = [:]) throws -> [OperationResult] {
        if operations.count > Limits.operationsPerBatch {
            throw CloudKitError(.limitExceeded, "a request holds at most \(Limits.operationsPerBatch) operations; this one has \(operations.count)")
        }
        let user = try requireWrite()
        let z = try zone(name)
        let atomically = atomic && !z.zoneID.isDefault
        let roles = try callerRoles()
        let stored = try schema()
        var schemaContext = SchemaContext(schema: stored, environment: address.environment)

        func run(nextSeq: Int64) throws -> (Transaction, [OperationResult]) {
            schemaContext = SchemaContext(schema: stored, environment: address.environment)
            let writer = RecordWriter(zone: z, scope: scope, user: user, deviceID: caller.deviceID, now: clock.now(), assets: assets,
                                      schema: schemaContext, roles: roles)
            let tx = Transaction(zone: z, nextSeq: nextSeq)
            tx.assets = pending
            var results: [OperationResult] = []
            var failedAt: Int?
            for (i, op) in operations.enumerated() {
                if failedAt != nil { results.append(.failed(CloudKitError(.atomicError, "atomic batch failed", recordName: op.recordName))); continue }
                let child = tx.child()
                do {
                    results.append(try writer.apply(op, in: child))
                    tx.merge(child)
                } catch let e as CloudKitError {
                    var err = e
                    if err.recordName == nil { err.recordName = op.recordName }
                    results.append(.failed(err))
                    if atomically { failedAt = i }
                }
            }
            if let f = failedAt {
                for i in 0..<f { results[i] = .failed(CloudKitError(.atomicError, "atomic batch failed", recordName: operations[i].recordName ?? recordName(of: results[i]))) }
                tx.entries = []
                tx.changes = []
            }
            return (tx, results)
        }

        if !z.existsOnDisk {
            // Nothing on disk yet: find out first whether anything would be written, so a
            // request that fails leaves the data directory untouched.
            let (dry, results) = try run(nextSeq: 1)
            if dry.entries.isEmpty { return results }
            try z.create(timestamp: clock.now())
        }
        let (tx, results) = try z.withLock { () throws -> (Transaction, [OperationResult]) in
            // The zone may have been deleted while this process waited for the lock.
            guard z.existsOnDisk else {
                throw CloudKitError(.zoneNotFound, "zone '\(name)' does not exist in the \(scope.rawValue) database", zoneID: z.zoneID)
            }
            let (tx, results) = try run(nextSeq: z.history.head() + 1)
            // Types and fields defined just in time go into the schema first, so no record is
            // ever stored under a schema that lacks its fields.
            if !tx.entries.isEmpty && schemaContext.changed { try schemaAdmin.store(address.environment).merge(schemaContext.additions) }
            try z.commit(tx, assets: assets)
            return (tx, results)
        }
        if !tx.entries.isEmpty {
            // The records are committed; what follows only feeds change fetches and pushes.
            try noteZoneChange(name, op: "change")
            try deliverNotifications(zone: z, changes: tx.changes)
        }
        return results
    }

    private func recordName(of r: OperationResult) -> String? {
        switch r {
        case .saved(let rec): return rec.recordName
        case .deleted(let n, _): return n
        case .failed(let e): return e.recordName
        }
    }

    /// Looks records up by name: a record or a NOT_FOUND error per name.
    public func lookup(zone name: String, recordNames: [String]) throws -> [OperationResult] {
        let z = try zone(name)
        return try recordNames.map { n in
            try Names.validateRecordName(n)
            if let r = try z.record(named: n) {
                guard try canRead(r) else {
                    return .failed(CloudKitError(.accessDenied, "records of type '\(r.recordType)' are not readable by this user (schema GRANTs)", recordName: n, zoneID: z.zoneID))
                }
                return .saved(r)
            }
            return .failed(CloudKitError(.notFound, "record '\(n)' not found", recordName: n, zoneID: z.zoneID))
        }
    }
}
