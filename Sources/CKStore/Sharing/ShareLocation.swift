import CKModel

/// Where a share lives and what it is.
package struct ShareLocation {
    package var owner: String
    package var zoneName: String
    package var share: Record
    package var state: ShareState
    package var zoneID: ZoneID { ZoneID(zoneName: zoneName, ownerRecordName: owner) }

    package init(owner: String, zoneName: String, share: Record, state: ShareState) {
        self.owner = owner
        self.zoneName = zoneName
        self.share = share
        self.state = state
    }

    /// Every share of the container and environment, with its owner and zone: each known
    /// user's private database, each zone registry, each share record named there.
    package static func all(paths: DataPaths, container: String, environment: Environment, clock: Clock) throws -> [ShareLocation] {
        var out: [ShareLocation] = []
        for u in try AccountStore(paths: paths, clock: clock).allUsers().sorted(by: { $0.userRecordName < $1.userRecordName }) {
            let db = paths.database(container, environment, .private, user: u.userRecordName)
            for file in try FileSystem.list(db + "/shares").sorted() where file.hasSuffix(".json") && !file.hasPrefix(".") {
                guard let j = try FileSystem.readJSON(db + "/shares/" + file), let zoneName = j["zoneName"]?.stringValue,
                      case .present(let z) = try ZoneStore.load(directory: DataPaths.zone(database: db, zoneName: zoneName),
                                                                zoneID: ZoneID(zoneName: zoneName, ownerRecordName: u.userRecordName)) else { continue }
                let snapshot = try z.snapshot()
                for name in try ShareRegistry(database: db, zoneName: zoneName).shareNames() {
                    guard let r = try snapshot.record(named: name), let state = try ShareState(r) else { continue }
                    out.append(ShareLocation(owner: u.userRecordName, zoneName: zoneName, share: r, state: state))
                }
            }
        }
        return out
    }
}
