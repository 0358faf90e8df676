import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `ck fsck` found, and what it repaired (the API answers it as `FsckResponse`).
package struct FsckReport {
    package struct Problem {
        package var path: String
        package var problem: String
        package var repaired: Bool
    }

    package var problems: [Problem] = []
    package var zones = 0
    package var records = 0
    package var historyEntries: Int64 = 0
    package var files = 0

    package var clean: Bool { problems.allSatisfy(\.repaired) }
}

/// `ck fsck`: checks every file of the data directory and every history, and repairs what a
/// crash, a full disk or a hand edit can leave — taking the same locks writers take, so it is
/// safe beside them. The primary files are the histories (each zone's, which holds every saved
/// record whole, and each database's zone-level entries), `zone.json`, `device.json` and the
/// users; everything else is derived from them and rebuilt when it disagrees: record files,
/// the reference index, database-history entries a crash kept from being written, notification
/// logs, the account-event log. A second run after a repair finds nothing.
package final class Fsck {
    package let paths: DataPaths
    package let repair: Bool
    package let clock: Clock
    package var report = FsckReport()

    package init(paths: DataPaths, repair: Bool, clock: Clock) {
        self.paths = paths
        self.repair = repair
        self.clock = clock
    }

    package static func run(paths: DataPaths, repair: Bool, clock: Clock = .system) throws -> FsckReport {
        let f = Fsck(paths: paths, repair: repair, clock: clock)
        guard try FileSystem.isDirectory(paths.root) else { return f.report }
        f.guarded(paths.root) { try f.checkAccount() }
        f.guarded(paths.root + "/containers") {
            for container in try FileSystem.list(paths.root + "/containers") where !container.hasPrefix(".") {
                if PathEncoding.decodeSimple(container) == nil {
                    f.note(paths.root + "/containers/" + container, "not a container's directory (its name decodes to no container identifier)", repaired: false)
                }
                for env in Environment.allCases {
                    f.guarded(paths.root + "/containers/" + container + "/" + env.rawValue) { try f.checkEnvironment(container: container, env) }
                }
            }
        }
        f.guarded(paths.assetsDirectory + "/uploads") {
            for e in try UploadArea(paths: paths, clock: clock).sweep(dryRun: !repair) { f.note(paths.root + "/" + e.path, e.why, repaired: repair) }
        }
        f.walk(paths.root)
        return f.report
    }

    /// Runs one check; what stops it (a link, a damaged file) is reported and the rest goes on.
    func guarded(_ path: String, _ body: () throws -> Void) {
        do { try body() } catch let e as CloudKitError {
            if !report.problems.contains(where: { $0.problem == e.reason }) { note(path, e.reason, repaired: false) }
        } catch {
            note(path, "\(error)", repaired: false)
        }
    }

    /// The writers' lock; a dry run takes it only if it exists, so that it creates nothing.
    package func lock(_ path: String, _ mode: FileLock.Mode = .exclusive) throws -> FileLock? {
        repair ? try FileLock(path: path, mode) : try FileLock.acquireExisting(path, mode)
    }

    package func rel(_ p: String) -> String { p.hasPrefix(paths.root + "/") ? String(p.dropFirst(paths.root.count + 1)) : p }

    package func note(_ path: String, _ problem: String, repaired: Bool) {
        report.problems.append(.init(path: rel(path), problem: problem, repaired: repaired))
    }

    // MARK: the account

    private func checkAccount() throws {
        let accounts = AccountStore(paths: paths, clock: clock)
        for found in try accounts.check(repair: repair) { note(accounts.eventsFile, found, repaired: repair) }
    }

    // MARK: environments and databases

    private func checkEnvironment(container encoded: String, _ env: Environment) throws {
        let envDir = paths.root + "/containers/" + encoded + "/" + env.rawValue
        guard try FileSystem.isDirectory(envDir), let container = PathEncoding.decodeSimple(encoded) else { return }
        let g = EnvironmentGuard(paths: paths, container: container, environment: env)
        if try FileSystem.exists(g.resetMarker) {
            if g.resets {
                if repair { try g.finishInterruptedReset() }
                note(g.resetMarker, "a schema reset was interrupted; finishing it", repaired: repair)
            } else {
                if repair { try FileSystem.remove(g.resetMarker) }
                note(g.resetMarker, "a reset marker in \(env.rawValue), which is never reset: not ck's (removed)", repaired: repair)
            }
        }
        let lock = try self.lock(g.lockFile, .shared)
        defer { lock?.unlock() }
        if try FileSystem.isDirectory(envDir + "/public") {
            guarded(envDir + "/public") { try checkDatabase(container: container, env, .public, owner: nil, directory: envDir + "/public") }
        }
        for scope in [DatabaseScope.private, .shared] {
            guarded(envDir + "/" + scope.rawValue) {
                for owner in try FileSystem.list(envDir + "/" + scope.rawValue) where !owner.hasPrefix(".") {
                    let dir = envDir + "/" + scope.rawValue + "/" + owner
                    guard Identifiers.isUserRecordName(owner) else {
                        note(dir, "not a user's database (expected _ and 32 hex digits)", repaired: false)
                        continue
                    }
                    guarded(dir) { try checkDatabase(container: container, env, scope, owner: owner, directory: dir) }
                }
            }
        }
        guarded(envDir + "/notifications") {
            for user in try FileSystem.list(envDir + "/notifications") where !user.hasPrefix(".") {
                for device in try FileSystem.list(envDir + "/notifications/" + user) where !device.hasPrefix(".") {
                    let box = NotificationInbox(directory: envDir + "/notifications/" + user + "/" + device)
                    guarded(box.directory) {
                        for found in try box.cutUncommittedTail(repair: repair) { note(box.logFile, found.problem, repaired: repair) }
                    }
                }
            }
        }
    }

    /// A Database as fsck acts on it: as its owner, from no device.
    private func database(container: String, _ env: Environment, _ scope: DatabaseScope, owner: String?) throws -> Database {
        let user = owner.map { UserAccount(appleID: "", userRecordName: $0) }
        let db = try Database(address: DatabaseAddress(container: container, environment: env, scope: scope),
                              caller: Principal(status: .available, user: user, deviceID: "ck-fsck"), paths: paths, clock: clock)
        if scope == .shared { db.shared = SharedDatabase(participant: db) }
        return db
    }

    private func checkDatabase(container: String, _ env: Environment, _ scope: DatabaseScope, owner: String?, directory: String) throws {
        let db = try database(container: container, env, scope, owner: owner)
        guard db.directory == directory else {
            note(directory, "database directory does not match its owner", repaired: false)
            return
        }
        // Database level: interrupted zone creations and deletions, the history's tail.
        var announced: [NameKey: [String: Int64]] = [:]
        var announcedThrough: Int64 = 0
        var databaseWhole = true
        do {
            let lock = try self.lock(db.journal.databaseLockFile)
            defer { lock?.unlock() }
            let pending = try FileSystem.list(db.journal.intentsDirectory).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
            if repair {
                try db.journal.finishIntents(holdingZone: nil)
                for p in pending {
                    let left = try FileSystem.exists(db.journal.intentsDirectory + "/" + p)
                    // What is left belongs to a zone a running writer holds; it finishes it.
                    note(db.journal.intentsDirectory + "/" + p, left ? "a zone change is being finished by a running writer" : "a zone change a crash interrupted was finished", repaired: true)
                }
            } else {
                for p in pending { note(db.journal.intentsDirectory + "/" + p, "a zone change a crash interrupted awaits finishing", repaired: false) }
            }
            databaseWhole = try checkHistory(db.databaseHistory, what: "database history")
            if databaseWhole { try emptyTrash(db) }
            try sweepLegacyDeletions(db, historyWhole: databaseWhole)
            announcedThrough = try db.databaseHistory.head()
            try? Fsck.announcements(db, after: 0, through: announcedThrough, into: &announced)
        }
        guard let zones = try Directory.open(directory + "/zones") else { return }
        for entry in try zones.entries() where !entry.hasPrefix(".") && zones.kind(of: entry) == .directory {
            guarded(directory + "/zones/" + entry) {
                try checkZone(db, directoryName: entry, announced: databaseWhole ? announced : nil, through: announcedThrough)
            }
        }
    }

    /// Which zone incarnations the database history records, and through which zone entry.
    static func announcements(_ db: Database, after: Int64, through: Int64?, into map: inout [NameKey: [String: Int64]]) throws {
        try db.databaseHistory.forEachDatabaseEntry(after: after, through: through) { e in
            map[e.key, default: [:]][e.incarnation] = max(map[e.key]?[e.incarnation] ?? 0, e.zoneSeq ?? 0)
            return true
        }
    }

    /// Trash left by a deletion or purge whose intent is gone (a power loss): record it, remove
    /// it. A purge's trash is named `<incarnation>.purge`.
    private func emptyTrash(_ db: Database) throws {
        for entry in try FileSystem.list(db.journal.trashDirectory) where !entry.hasPrefix(".") {
            let dir = db.journal.trashDirectory + "/" + entry
            let purge = entry.hasSuffix(DatabaseIntent.purgeSuffix)
            let inc = purge ? String(entry.dropLast(DatabaseIntent.purgeSuffix.count)) : entry
            if repair {
                if let name = try? FileSystem.readJSON(dir + "/zone.json")?["zoneID"]?["zoneName"]?.stringValue {
                    _ = try db.journal.recordInDatabaseHistory(DatabaseIntent(op: purge ? .purge : .delete, zoneName: name, incarnation: inc, after: 0))
                }
                try FileSystem.removeTree(dir)
            }
            note(dir, purge ? "a purged zone's files remain (its purge was interrupted)" : "a deleted zone's files remain (its deletion was interrupted)", repaired: repair)
        }
    }

    /// Deletions of the earlier layout (`zones/.deleted-…`): finished, and recorded in the
    /// database history unless it records them already (as emptyTrash does), so that
    /// database-changes clients learn the zone is gone. The caller holds the database's lock.
    private func sweepLegacyDeletions(_ db: Database, historyWhole: Bool) throws {
        for name in try FileSystem.list(db.directory + "/zones") where name.hasPrefix(".deleted-") {
            let dir = db.directory + "/zones/" + name
            if repair {
                if historyWhole, let zj = try? FileSystem.readJSON(dir + "/zone.json"), let zoneName = zj["zoneID"]?["zoneName"]?.stringValue,
                   let inc = zj["incarnation"]?.stringValue, db.journal.announces(zoneName) {
                    // Not while that very incarnation is still in place (a copy, not a deletion).
                    let live: Bool
                    if case .present(let z) = try db.zonePresence(zoneName), z.incarnation == inc { live = true } else { live = false }
                    if !live { _ = try db.journal.recordInDatabaseHistory(DatabaseIntent(op: .delete, zoneName: zoneName, incarnation: inc, after: 0)) }
                }
                try FileSystem.removeTree(dir)
            }
            note(dir, "zone deletion was interrupted; its files remain", repaired: repair)
        }
    }

    /// Cuts an uncommitted tail and reads the whole history once, checking every entry.
    /// Returns whether the history is whole: nothing derived from a damaged one is rebuilt, so
    /// that no record is ever "restored" to an older version than the one acknowledged.
    @discardableResult
    func checkHistory(_ h: ChangeHistory, what: String) throws -> Bool {
        var whole = true
        for found in try h.cutUncommittedTail(repair: repair) {
            note(h.logFile, "\(what): \(found.problem)", repaired: repair && found.repairable)
            if !found.repairable { whole = false }
        }
        func count() throws {
            var n: Int64 = 0
            try h.forEachLine(after: 0) { _ in n += 1; return true }
            report.historyEntries += n
        }
        do { try count() } catch let e as CloudKitError {
            // The index is derived from the log (commits sync the log only): index words a
            // power loss lost, or wrote back out of order, are made again from the log.
            if let dir = try Directory.open(h.directory), let rebuilt = try h.log.indexFromLog(dir),
               rebuilt != (try dir.read(ChangeHistory.indexName) ?? []) {
                note(h.indexFile, "\(what): the index disagrees with the log (index words lost to a power loss): made again from the log", repaired: repair)
                guard repair else { return false }
                try h.log.rebuildIndex(rebuilt, in: dir)
                if (try? count()) != nil { return whole }
            }
            note(h.logFile, "\(what) is damaged: \(e.reason); nothing derived from it is repaired until it is restored (from a backup)", repaired: false)
            whole = false
        }
        return whole
    }

    // MARK: every file

    /// Links (never followed), modes, temporary files of writers that are gone, files that
    /// are not valid JSON.
    private func walk(_ path: String) {
        guarded(path) { try walkDirectory(path) }
    }

    private func walkDirectory(_ path: String) throws {
        guard let dir = try Directory.open(path) else { return }
        for name in try dir.entries() {
            let p = path + "/" + name
            switch dir.kind(of: name) {
            case nil:
                continue  // gone meanwhile: a writer's temporary file, renamed into place
            case .symlink?:
                note(p, "symbolic link inside the data directory: ck never follows it (remove it)", repaired: false)
            case .directory?:
                if let st = dir.status(of: name), st.st_mode & 0o077 != 0 {
                    if repair { try dir.setMode(name, FileSystem.directoryPermissions) }
                    note(p, "directory is readable or writable by others (mode \(String(st.st_mode & 0o777, radix: 8)))", repaired: repair)
                }
                walk(p)
            case .file?:
                if let pid = FileSystem.temporaryOwner(name) {
                    if kill(pid, 0) != 0 && errno == ESRCH {
                        if repair { try dir.remove(name) }
                        note(p, "half-written temporary file left by an interrupted write", repaired: repair)
                    }
                    continue
                }
                report.files += 1
                if let st = dir.status(of: name), st.st_mode & 0o077 != 0 {
                    if repair { try dir.setMode(name, FileSystem.filePermissions) }
                    note(p, "file is readable or writable by others (mode \(String(st.st_mode & 0o777, radix: 8)))", repaired: repair)
                }
                if name.hasSuffix(".json"), !report.problems.contains(where: { $0.path == rel(p) }) {
                    // Gone since it was listed (an intent a writer finished): nothing to check.
                    guard let bytes = try dir.read(name) else { continue }
                    do { _ = try JSONParser.parse(bytes) } catch {
                        note(p, "not valid JSON: \(error)", repaired: false)
                    }
                }
            default:
                note(p, "not a regular file or directory", repaired: false)
            }
        }
    }
}
