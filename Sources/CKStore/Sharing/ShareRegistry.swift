import CKJSON
import CKModel

/// The names of the share records of one zone of a private database: `shares/<zone>.json`. It
/// may name a share that is gone (a failed commit after it was written): readers check each.
struct ShareRegistry {
    package let file: String

    package init(database: String, zoneName: String) {
        file = database + "/shares/" + PathEncoding.component(zoneName) + ".json"
    }

    package init(zone: ZoneStore) {
        let suffix = "/zones/" + PathEncoding.component(zone.zoneID.zoneName)
        let db = zone.directory.hasSuffix(suffix) ? String(zone.directory.dropLast(suffix.count)) : zone.directory
        self.init(database: db, zoneName: zone.zoneID.zoneName)
    }

    func shareNames() throws -> [String] {
        (try FileSystem.readJSON(file)?["shares"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    package func write(_ names: [String], zoneName: String) throws {
        try FileSystem.makeDirectories(String(file[..<file.lastIndex(of: "/")!]))
        try FileSystem.writeJSON(file, ["schemaVersion": .int(FileFormat.schemaVersion), "zoneName": .string(zoneName),
                                        "shares": .array(names.map(JSONValue.string))])
    }

    /// Called under the zone's lock (of a private database) just before a commit that makes a share record: the
    /// zone's registry names it first (should the commit fail, the name leads nowhere, which
    /// readers allow for). Names of shares deleted by earlier commits are dropped meanwhile.
    static func noteShares(of tx: Transaction, in z: ZoneStore, database directory: String) throws {
        guard !z.zoneID.isDefault else { return }
        let made = tx.records.values.compactMap { $0 }.filter { $0.recordType == ShareInfo.recordType }.map(\.recordName).sorted()
        // Most commits make no share: the registry is not even looked at.
        guard !made.isEmpty else { return }
        let registry = ShareRegistry(database: directory, zoneName: z.zoneID.zoneName)
        let before = try registry.shareNames()
        guard made.contains(where: { m in !before.contains { $0.sameBytes(m) } }) else { return }
        var names = try before.filter { n in
            if tx.records[NameKey(n)] != nil { return true }
            return try z.record(named: n)?.recordType == ShareInfo.recordType
        }
        for m in made where !names.contains(where: { $0.sameBytes(m) }) { names.append(m) }
        try registry.write(names, zoneName: z.zoneID.zoneName)
    }
}
