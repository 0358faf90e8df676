/// A device's saved change tokens (what an app keeps in UserDefaults): one file per zone and
/// one per database, under `devices/<device>/bookmarks/…`, so two devices fetch independently.
extension Database {
    var bookmarksDirectory: String {
        paths.root + "/devices/" + PathEncoding.component(caller.deviceID) + "/bookmarks/" + PathEncoding.component(address.container)
            + "/" + address.environment.rawValue + "/" + scope.rawValue + "/" + PathEncoding.component(ownerRecordName)
    }

    func bookmarkFile(zone: String?) -> String {
        zone.map { bookmarksDirectory + "/zones/" + PathEncoding.component($0) + ".json" } ?? bookmarksDirectory + "/database.json"
    }

    /// The device's saved token for a zone (nil: the database's), if any.
    public func bookmark(zone: String?) throws -> String? {
        if let z = zone { try Names.validateZoneName(z) }
        return try FileSystem.readJSON(bookmarkFile(zone: zone))?["token"]?.stringValue
    }

    public func saveBookmark(zone: String?, token: String) throws {
        let f = bookmarkFile(zone: zone)
        try FileSystem.makeDirectories(String(f[..<f.lastIndex(of: "/")!]))
        try FileSystem.writeJSON(f, ["schemaVersion": .int(DataPaths.schemaVersion), "token": .string(token)])
    }
}
