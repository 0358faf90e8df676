import CKModel

/// The entry point of the core: a data directory holding one device's view of CloudKit.
package final class CloudKitStore {
    package let paths: DataPaths
    package let clock: Clock
    package let accounts: AccountStore
    /// Whether commits that come in groups publish their derived files after the answer: a
    /// long-lived server, whose next group commits meanwhile (GroupCommit). A command that
    /// returns has published what it did.
    package let publishesAfterAnswer: Bool

    package init(root: String, clock: Clock = .system, publishesAfterAnswer: Bool = false) {
        self.paths = DataPaths(root: root)
        self.clock = clock
        self.accounts = AccountStore(paths: paths, clock: clock)
        self.publishesAfterAnswer = publishesAfterAnswer
        // A long-lived server reads the same records again and again; a command reads each once.
        // It also takes an unmoved write counter for a check of each small file it keeps.
        if publishesAfterAnswer {
            StampedFiles.shared.keepRecords()
            StampedFiles.shared.trustWriteCounter(under: paths.root)
        }
    }

    /// Opens a database as the device's account, or as `actingAs` (an Apple ID that signed in here).
    package func database(_ address: DatabaseAddress, actingAs: String? = nil, deviceID: String = "default") throws -> Database {
        try database(address, principal: try accounts.caller(actingAs: actingAs, deviceID: deviceID))
    }

    /// Opens a database as a resolved principal (the API's preflight resolves callers).
    package func database(_ address: DatabaseAddress, principal: Principal) throws -> Database {
        let db = try Database(address: address, caller: principal, paths: paths, clock: clock)
        db.publishesAfterAnswer = publishesAfterAnswer
        if address.scope == .shared { db.shared = SharedDatabase(participant: db) }
        try db.environmentGuard.checkForInterruptedReset()
        return db
    }

    package var assets: AssetStore { AssetStore(paths: paths) }

    /// Waits until every commit of this process has its files published (GroupCommit).
    package func finishPublishing() { GroupCommit.shared.finishPublishing() }
    package var identities: IdentityStore { IdentityStore(paths: paths, accounts: accounts) }

    /// Makes the data directory (0700) with its marker file; harmless when it exists.
    @discardableResult
    package func initialize() throws -> Bool {
        if try FileSystem.exists(paths.markerFile) { return false }
        try FileSystem.makeDirectories(paths.root)
        try FileSystem.writeJSON(paths.markerFile, ["schemaVersion": .int(FileFormat.schemaVersion), "kind": "ck data directory"])
        return true
    }

    /// The container chosen with `ck container use`, if any.
    package func defaultContainer() throws -> String? {
        try FileSystem.readJSON(paths.configFile)?["container"]?.stringValue
    }

    package func setDefaultContainer(_ id: String) throws {
        try Names.validateContainerID(id)
        try FileSystem.makeDirectories(paths.root)
        try FileSystem.writeJSON(paths.configFile, ["schemaVersion": .int(FileFormat.schemaVersion), "container": .string(id)])
    }
}

extension CloudKitStore {
    /// The containers that have a directory here, each with the environments that hold one,
    /// sorted by identifier. A directory whose name decodes to no identifier is fsck's to
    /// report, and left out.
    package func containers() throws -> [(id: String, environments: [Environment])] {
        let root = paths.root + "/containers"
        var out: [(id: String, environments: [Environment])] = []
        for entry in try FileSystem.list(root) where !entry.hasPrefix(".") {
            guard let id = PathEncoding.decodeSimple(entry), (try? Names.validateContainerID(id)) != nil else { continue }
            let envs = try Environment.allCases.filter { try FileSystem.isDirectory(root + "/" + entry + "/" + $0.rawValue) }
            out.append((id, envs))
        }
        return out.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }
}
