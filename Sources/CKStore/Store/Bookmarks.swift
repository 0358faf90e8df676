import CKModel

/// A device's saved change tokens (what an app keeps in UserDefaults), kept beside what they
/// point into: a zone's in `zones/<zone>/tokens/<device>.json`, the database's in
/// `<database>/tokens/<device>.json` — so two devices fetch independently, and deleting a zone
/// (or purging it, or resetting the environment) takes its bookmarks with it.
///
/// Earlier data directories kept them under `devices/<device>/bookmarks/…`; the first use of
/// bookmarks moves that tree here (`migrateLegacyBookmarks`), dropping the bookmarks of zones
/// that no longer exist.
package struct Bookmarks {
    let db: Database

    private func file(zone: String?) -> String {
        let device = "/tokens/" + PathEncoding.component(db.caller.deviceID) + ".json"
        return zone.map { (db.shared?.bookmarkDirectory($0) ?? db.zonePath($0)) + device } ?? db.directory + device
    }

    /// The device's saved token for a zone (nil: the database's), if any.
    package func token(zone: String?) throws -> String? {
        if let z = zone { try Names.validateZoneName(z) }
        try BookmarkMigration(paths: db.paths).migrateIfNeeded()
        return try FileSystem.readJSON(file(zone: zone))?["token"]?.stringValue
    }

    /// Saves the device's token for a zone (nil: the database's). A zone that is gone (deleted
    /// meanwhile) keeps no bookmark: nothing is written.
    package func save(zone: String?, token: String) throws {
        try BookmarkMigration(paths: db.paths).migrateIfNeeded()
        if let z = zone, !(try db.shared.map { try $0.bookmarkable(z) } ?? FileSystem.exists(db.zonePath(z) + "/zone.json")) { return }
        let f = file(zone: zone)
        try FileSystem.makeDirectories(String(f[..<f.lastIndex(of: "/")!]))
        try FileSystem.writeJSON(f, ["schemaVersion": .int(FileFormat.schemaVersion), "token": .string(token)])
    }
}

extension Database {
    package var bookmarks: Bookmarks { Bookmarks(db: self) }
}

/// Moves bookmarks of the earlier layout, `devices/<device>/bookmarks/<container>/<environment>/
/// <scope>/<owner>/{zones/<zone>.json, database.json}`, beside their zones and databases. Each
/// file is written in its new place before the old tree goes, and a bookmark already in the new
/// place wins, so a migration a crash interrupts is simply done again.
struct BookmarkMigration {
    package let paths: DataPaths
    var legacy: String { paths.root + "/devices" }

    func migrateIfNeeded() throws {
        guard try FileSystem.isDirectory(legacy) else { return }
        guard let lock = try FileLock.acquire(paths.root + "/bookmarks.lock", createDirectory: false) else { return }
        defer { lock.unlock() }
        for device in try FileSystem.list(legacy) where !device.hasPrefix(".") {
            let root = legacy + "/" + device + "/bookmarks"
            for container in try FileSystem.list(root) where !container.hasPrefix(".") {
                for env in try FileSystem.list(root + "/" + container) where env == "development" || env == "production" {
                    for scope in try FileSystem.list(root + "/" + container + "/" + env) where ["public", "private", "shared"].contains(scope) {
                        let scopeDir = root + "/" + container + "/" + env + "/" + scope
                        for owner in try FileSystem.list(scopeDir) where !owner.hasPrefix(".") {
                            let from = scopeDir + "/" + owner
                            var db = paths.root + "/containers/" + container + "/" + env + "/" + scope
                            if scope != "public" { db += "/" + owner }
                            try move(from + "/database.json", to: db, device: device, needs: nil)
                            for file in try FileSystem.list(from + "/zones") where file.hasSuffix(".json") && !file.hasPrefix(".") {
                                let zone = db + "/zones/" + String(file.dropLast(5))
                                try move(from + "/zones/" + file, to: zone, device: device, needs: zone + "/zone.json")
                            }
                        }
                    }
                }
            }
            try FileSystem.removeTree(root)
            (try? Directory.open(legacy))??.removeIfEmpty(device)
        }
        (try? Directory.open(paths.root))??.removeIfEmpty("devices")
    }

    /// One bookmark into `<dir>/tokens/<device>.json`, unless `needs` (the zone) is gone.
    private func move(_ file: String, to dir: String, device: String, needs: String?) throws {
        guard let j = try? FileSystem.readJSON(file), j["token"]?.stringValue != nil else { return }
        if let n = needs, !(try FileSystem.exists(n)) { return }
        let target = dir + "/tokens/" + device + ".json"
        if try FileSystem.exists(target) { return }
        try FileSystem.makeDirectories(dir + "/tokens")
        try FileSystem.writeJSON(target, j)
    }
}
