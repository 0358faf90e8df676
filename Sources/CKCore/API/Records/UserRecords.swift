import CKModel
import CKStore

/// Each iCloud user's `Users` record in the public database (native `CKRecord.SystemType
/// .userRecord`): named by the user record name, created by CloudKit for its user, readable by
/// everyone, writable by its user only (the `Users` type's GRANTs), which apps fetch and extend
/// with fields of their own. ck makes it when it is first asked for — a lookup or a save naming
/// it in the public database of a container and environment — as its user: users are known to
/// the whole data directory, containers only once they are used. Making it is a write, with a
/// history entry, like any other.
extension CloudKitAPI {
    /// Makes the `Users` records of the users these names name, where they are not there yet.
    /// Only in the public database's zone; a name that is no user's is left alone.
    func ensureUserRecords(_ names: [String], zone: String, caller: Caller) throws {
        guard caller.scope == .public, zone == ZoneID.defaultZoneName else { return }
        let candidates = names.filter(Identifiers.isUserRecordName)
        guard !candidates.isEmpty else { return }
        let address = DatabaseAddress(container: caller.container, environment: caller.environment, scope: .public)
        for name in candidates {
            guard let user = try store.accounts.user(recordName: name) else { continue }
            // CloudKit makes it for its user, whatever the asking device's account says.
            let db = try store.database(address, principal: Principal(status: .available, user: user, deviceID: caller.deviceID))
            if try db.zone(ZoneID.defaultZoneName).record(named: name) != nil { continue }
            let made = RecordOperation(type: .create, recordName: name, recordType: RecordTypeSchema.users.name, recordChangeTag: nil, fields: [:])
            // Another process may have made it first: it is there all the same.
            if let e = try db.modify(zone: ZoneID.defaultZoneName, operations: [made]).first?.error, e.code != .exists { throw e }
        }
    }
}
