/// The one permission gate. Every record an answer carries passes `canRead`: current records,
/// records as of a point in history, change feeds, the server record of a CONFLICT, and what an
/// error message names. What the caller may not read does not exist for them: they are told
/// NOT_FOUND, in the same words whether the record exists or not.
struct PermissionGate {
    let db: Database

    /// Whether the caller may read this version of a record: in the public database as the
    /// record type's GRANTs say (nobody without an available account, so only `_world` GRANTs
    /// then); in the shared database only what is shared with them; in their own private
    /// database everything.
    func canRead(_ r: Record) throws -> Bool { try db.canRead(r) }

    /// A record the caller may read, as they may see it: a share record with only the
    /// participants they may see (ShareView: someone who came by a public share's URL sees its
    /// owner and themselves); nil when it does not exist for them.
    func shown(_ r: Record) throws -> Record? { try r.shareShown(to: db.caller.user?.userRecordName) }

    /// A result the caller may see: a record they may not read is NOT_FOUND; the server
    /// record of an error goes with the error only when they may read it.
    func admit(_ result: OperationResult, zone: ZoneID, at seq: Int64? = nil) throws -> OperationResult {
        switch result {
        case .saved(let r):
            guard try canRead(r), let shown = try shown(r) else { return .failed(notFound(r.recordName, zone: zone, at: seq)) }
            return .saved(shown)
        case .failed(var e):
            if let s = e.serverRecord, try !canRead(s) { e.serverRecord = nil }
            return .failed(e)
        case .deleted:
            return result
        }
    }

    /// A write's result the caller may see. The record a write answers with is the writer's
    /// to shape (RecordWriter: a write-only user sees only what they wrote); the server record
    /// of a CONFLICT or EXISTS goes with the error only when the caller may read it.
    func admitWritten(_ result: OperationResult) throws -> OperationResult {
        guard case .failed(var e) = result, let s = e.serverRecord, try !canRead(s) else { return result }
        e.serverRecord = nil
        return .failed(e)
    }

    /// The answer about a record the caller cannot see: the same for a hidden record as for
    /// one that does not exist.
    func notFound(_ name: String, zone: ZoneID, at seq: Int64? = nil) -> CloudKitError {
        var e = CloudKitError.recordNotFound(name, zone: zone, scope: db.address.scope, at: seq)
        e.recordName = name
        return e
    }
}

extension CloudKitError {
    /// NOT_FOUND naming where it looked: "record 'todo-1' not found in zone _defaultZone of the
    /// private database" (at a point of the history: "… as of Lists@12").
    static func recordNotFound(_ name: String, zone: ZoneID, scope: DatabaseScope, at seq: Int64? = nil) -> CloudKitError {
        let when = seq.map { " as of \(Names.describe(zone.zoneName))@\($0)" } ?? ""
        var e = CloudKitError(.notFound, "record '\(Names.describe(name))' not found in zone \(Names.describe(zone.zoneName)) of the \(scope.rawValue) database\(when)",
                              recordName: name, zoneID: zone)
        e.database = scope
        return e
    }
}
