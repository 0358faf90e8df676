import CKJSON
import CKModel
import Foundation

/// Addresses one database: container, environment, scope.
package struct DatabaseAddress: Sendable {
    package var container: String
    package var environment: Environment
    package var scope: DatabaseScope

    package init(container: String, environment: Environment, scope: DatabaseScope) {
        self.container = container
        self.environment = environment
        self.scope = scope
    }
}

/// One database as seen by one caller: its zones and what the caller may do in it.
package final class Database {
    package let address: DatabaseAddress
    package let caller: Principal
    package let paths: DataPaths
    package let clock: Clock
    package let directory: String
    /// Set on another user's private database opened for a share participant: its owner.
    package let owner: String?
    /// Set with `owner` for a participant (not the owner): whose writes ShareWriter checks.
    let shareAccess: ShareAccess?
    /// Set on a participant's shared database: the view that reaches the zones shared with
    /// them (Sharing/SharedDatabase.swift), where this database has none of its own.
    package var shared: (any SharedDatabaseView)?

    package init(address: DatabaseAddress, caller: Principal, paths: DataPaths, clock: Clock, owner: String? = nil,
                 shareAccess: ShareAccess? = nil) throws {
        try Names.validateContainerID(address.container)
        self.address = address
        self.caller = caller
        self.paths = paths
        self.clock = clock
        self.directory = paths.database(address.container, address.environment, address.scope, user: owner ?? caller.user?.userRecordName)
        self.owner = owner
        self.shareAccess = shareAccess
    }

    package var scope: DatabaseScope { address.scope }

    private var cachedSchema: Schema?
    /// Whether commits that come in groups publish their files after the answer (`ck serve`;
    /// GroupCommit).
    package var publishesAfterAnswer = false
    /// Set by a bulk load (`ck import`), which brings the indexes forward once at its end.
    package var defersIndexMaintenance = false
    private var cachedRoles: Set<String>?

    package var schemaAdmin: SchemaAdmin { SchemaAdmin(paths: paths, container: address.container) }

    /// The environment's schema, read once per command.
    package func schema() throws -> Schema {
        if let s = cachedSchema { return s }
        let s = try schemaAdmin.store(address.environment).load()
        cachedSchema = s
        return s
    }

    /// Reads the schema and roles afresh next time (a write, once it holds its locks).
    func forgetCachedSchema() {
        cachedSchema = nil
        cachedRoles = nil
    }

    /// The caller's custom roles in this environment (public-database GRANTs).
    func callerRoles() throws -> Set<String> {
        if let r = cachedRoles { return r }
        let r = try caller.user.map { try schemaAdmin.roles(of: $0.userRecordName, address.environment) } ?? []
        cachedRoles = r
        return r
    }

    /// Whether the caller may read a record: always outside the public database (which needs an
    /// available account to be read at all); there, as the record type's GRANTs say for the
    /// user the device lets act — nobody, without an available account, so only `_world`
    /// GRANTs apply whoever `--as` names. Every read path goes through this.
    package func canRead(_ r: Record) throws -> Bool {
        if let shared { return try shared.canRead(r) }
        guard scope == .public else { return true }
        let reader = SchemaRules.reader(caller)
        return SchemaRules.permits(.read, type: try schema().types[r.recordType], user: reader, roles: reader == nil ? [] : try callerRoles(),
                                   creator: r.created.userRecordName)
    }

    /// Whether the caller may read every record zone `z` holds, whoever made it: only then may
    /// they learn how many there are (a count of records hidden from them would tell what
    /// CloudKit never does). In their own private database, always; in the shared database only
    /// in a zone shared whole with them (a zone-wide share they may read); in the public
    /// database when every record type of the schema — and any type `counted` that it lacks —
    /// lets them read records they did not create. Decided from the schema, never from which
    /// records exist, so that whether a count is shown says nothing of them either.
    package func readsEveryRecord(in z: ZoneStore, counted: some Sequence<String>) throws -> Bool {
        if shared != nil {
            guard let share = try ZoneSnapshot(z).record(named: ShareInfo.zoneWideName) else { return false }
            return try canRead(share)
        }
        guard scope == .public else { return true }
        let reader = SchemaRules.reader(caller)
        let roles = reader == nil ? [] : try callerRoles()
        let types = try schema().types
        // A creator no user is: a `_creator` GRANT reads only some of a type's records. A type
        // the schema lacks has the default GRANTs, which every reader may read under.
        return Set(types.keys).union(counted).allSatisfy { t in
            SchemaRules.permits(.read, type: types[t], user: reader, roles: roles, creator: "")
        }
    }

    package var assets: AssetStore { AssetStore(paths: paths) }

    /// Reading the public database needs no account; everything else needs an available one.
    package func requireRead() throws {
        if scope != .public { _ = try caller.requireUser(for: "reading the \(scope.rawValue) database") }
    }

    @discardableResult
    package func requireWrite() throws -> UserAccount {
        try caller.requireUser(for: "writing to the \(scope.rawValue) database")
    }

    package var ownerRecordName: String {
        if let o = owner { return o }
        return scope == .public ? ZoneID.defaultOwner : (caller.user?.userRecordName ?? ZoneID.defaultOwner)
    }

    /// In the shared database, a zone's owner is the user who shared it.
    package func zoneID(_ name: String) -> ZoneID { ZoneID(zoneName: name, ownerRecordName: shared?.zoneOwner(name) ?? ownerRecordName) }

    func zonePath(_ name: String) -> String { DataPaths.zone(database: directory, zoneName: name) }

    func zonePresence(_ name: String) throws -> ZoneStore.Presence {
        if let shared { return try shared.zonePresence(name) }
        return try ZoneStore.load(directory: zonePath(name), zoneID: zoneID(name))
    }

    /// The default zone before its first record: nothing on disk yet.
    func unmadeZone(_ name: String) -> ZoneStore { ZoneStore(directory: zonePath(name), zoneID: zoneID(name), incarnation: "") }

    var environmentGuard: EnvironmentGuard { EnvironmentGuard(paths: paths, container: address.container, environment: address.environment) }

    /// A zone that exists, for reading or writing records.
    package func zone(_ name: String) throws -> ZoneStore {
        try Names.validateZoneName(name)
        try requireRead()
        if name == ZoneID.defaultZoneName && scope == .shared {
            throw CloudKitError(.zoneNotFound, "the shared database has no default zone; its zones are other users' shared zones", zoneID: zoneID(name)).with(.acceptShare)
        }
        switch try zonePresence(name) {
        case .present(let z): return z
        case .absent where name == ZoneID.defaultZoneName: return unmadeZone(name)
        case .absent, .collision:
            var e = CloudKitError(.zoneNotFound, "zone '\(Names.describe(name))' does not exist in the \(scope.rawValue) database", zoneID: zoneID(name))
            if try wasPurged(name) {
                // CloudKit's userDeletedZone (28): the user deleted the app's data, so an app
                // must not upload its cache into the zone again unasked.
                e.reason = "zone '\(Names.describe(name))' was purged (deleted with its data, as a user does in iCloud settings); it stays gone until the zone is created again"
                e.nativeCode = 28
            }
            e.database = scope
            switch scope {
            case .private: e.nextStep = .createZone(name)
            case .public: e.nextStep = .onlyDefaultZone
            case .shared: e.nextStep = .acceptShare
            }
            throw e
        }
    }

    /// Whether the last thing the database history says of zone `name` is its purge (a zone
    /// made again since is no purged zone). Asked only when the zone is not there.
    func wasPurged(_ name: String) throws -> Bool {
        guard scope == .private, try FileSystem.exists(directory) else { return false }
        let key = NameKey(name)
        // Newest first, in blocks: the zone's last entry is usually near the head.
        var hi = try databaseHistory.head()
        while hi > 0 {
            let lo = max(0, hi - 256)
            var last: DatabaseIntent.Op?
            try databaseHistory.forEachDatabaseEntry(after: lo, through: hi) { e in
                if e.key == key { last = e.op }
                return true
            }
            if let op = last { return op == .purge }
            hi = lo
        }
        return false
    }

    // MARK: zones

    /// The Web Services zone dictionary as recorded from Apple's servers: zoneID, atomic, the
    /// share-eligibility flags (a custom zone of the private database can be shared whole or
    /// by hierarchy; no other zone can), and for a zone with a change feed its syncToken.
    package func zoneJSON(_ z: ZoneStore) throws -> JSONValue {
        let sharable = address.scope == .private && !z.zoneID.isDefault
        var o: [String: JSONValue] = ["zoneID": z.zoneID.json, "atomic": .bool(!z.zoneID.isDefault),
                                      "isEligibleForZoneShare": .bool(sharable), "isEligibleForHierarchicalShare": .bool(sharable)]
        if let t = try tokens.current(zone: z) { o["syncToken"] = .string(t) }
        return .object(o)
    }

    /// The database's zones: the default zone first (but in the shared database, which has
    /// none), then custom zones by the bytes of their names.
    package func listZones() throws -> [ZoneStore] {
        try requireRead()
        var out: [ZoneStore] = []
        if let shared {
            try requireRead()
            return try shared.zones()
        }
        if scope != .shared { out.append(try zone(ZoneID.defaultZoneName)) }
        var custom: [ZoneStore] = []
        guard let zones = try Directory.open(directory + "/zones") else { return out }
        for entry in try zones.entries() where !entry.hasPrefix(".") && zones.kind(of: entry) == .directory {
            guard let j = try zones.subdirectory(entry)?.readJSON("zone.json"), let n = j["zoneID"]?["zoneName"]?.stringValue,
                  n != ZoneID.defaultZoneName, PathEncoding.component(n) == entry, case .present(let z) = try zonePresence(n) else { continue }
            custom.append(z)
        }
        out += custom.sorted { NameKey($0.zoneID.zoneName) < NameKey($1.zoneID.zoneName) }
        return out
    }

    /// Another user's private database, opened for the caller as a participant of its shares.
    func ownerView(owner: String) throws -> Database {
        let me = try caller.requireUser(for: "using a share")
        let db = try Database(address: DatabaseAddress(container: address.container, environment: address.environment, scope: .private),
                              caller: caller, paths: paths, clock: clock, owner: owner,
                              shareAccess: owner == me.userRecordName ? nil : ShareAccess(participant: me.userRecordName))
        db.publishesAfterAnswer = publishesAfterAnswer
        return db
    }

    /// This database as another thread uses it (a zone's publisher): the same caller and
    /// address, caches of its own. (Never a shared database's view: groups commit into the
    /// owner's private database.)
    func detached() throws -> Database {
        let db = try Database(address: address, caller: caller, paths: paths, clock: clock, owner: owner, shareAccess: shareAccess)
        db.publishesAfterAnswer = publishesAfterAnswer
        return db
    }

    /// The caller's user record name, if anyone is signed in.
    package var me: String? { caller.user?.userRecordName }
}
