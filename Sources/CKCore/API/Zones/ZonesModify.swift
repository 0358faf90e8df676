import CKJSON
import CKModel
import CKStore

/// `zones/modify`: creating and deleting custom zones (private database only, as CloudKit).
/// "All operations are attempted and performed in the order they appear" (Apple's Modifying
/// Zones page): a created zone is answered with its zone dictionary (a zone that exists is
/// returned unchanged, like saving a CKRecordZone again), a deleted one with `{zoneID,
/// deleted: true}`, and one that cannot be done (a bad name, the default zone, a database
/// without custom zones, a zone to delete that is not there) with a Zone Fetch Error
/// `{zoneID, serverErrorCode, reason}` in its place, the others done all the same. What is
/// wrong with the request itself (two operations on one zone, more than the operations a
/// request holds, no account to write with) fails it whole and changes nothing.
public struct ZonesModifyRequest: Sendable {
    public enum OperationType: String, Sendable, CaseIterable { case create, delete }

    public struct Operation: Sendable, Equatable {
        public var type: OperationType
        public var zoneName: String

        public init(_ type: OperationType, _ zoneName: String) {
            self.type = type
            self.zoneName = zoneName
        }
    }

    public var operations: [Operation]
    /// ck's `--if-exists`: a delete of a zone that is not there counts as done and is left out
    /// of the answer.
    public var ifExists: Bool

    public init(operations: [Operation], ifExists: Bool = false) {
        self.operations = operations
        self.ifExists = ifExists
    }

    /// Keys a zone dictionary may carry: `zoneID`, and what a zones/list answer adds to it (a
    /// zone copied from a response is accepted as it is; those keys are the server's).
    static let zoneKeys: Set<String> = ["zoneID", "atomic", "syncToken", "isEligibleForZoneShare", "isEligibleForHierarchicalShare"]

    /// The Web Services body: `{operations: [{operationType: create|delete, zone: {zoneID: {zoneName}}}]}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "zones/modify request", keys: ["operations"])
        let list = try RequestBody.array(o["operations"], "operations")
        operations = try list.enumerated().map { i, item in
            let op = try RequestBody.object(item, "operations[\(i)]", keys: ["operationType", "zone"])
            guard let t = op["operationType"]?.stringValue, let type = OperationType(rawValue: t) else {
                throw CloudKitError.badRequest("operations[\(i)]: operationType must be create or delete")
            }
            guard let zj = op["zone"] else { throw CloudKitError.badRequest("operations[\(i)] needs a 'zone'") }
            let zone = try RequestBody.object(zj, "operations[\(i)].zone", keys: ZonesModifyRequest.zoneKeys)
            guard let id = zone["zoneID"] else { throw CloudKitError.badRequest("operations[\(i)].zone needs a 'zoneID'") }
            return Operation(type, try RequestBody.zoneID(id, "operations[\(i)].zone.zoneID").zoneName)
        }
        ifExists = false
    }
}

extension CloudKitAPI {
    public func modifyZones(_ r: ZonesModifyRequest, as caller: Caller) throws -> ItemsResponse {
        try Limits.checkItems(r.operations.count)
        var seen = Set<NameKey>()
        for op in r.operations where !seen.insert(NameKey(op.zoneName)).inserted {
            // One operation per zone, as Web Services requires.
            throw CloudKitError(.badRequest, "zone '\(Names.describe(op.zoneName))' appears in more than one operation; a request takes one operation per zone")
        }
        let ctx = try preflight(.zonesModify, caller, zones: r.operations.map(\.zoneName), need: .write)
        let db = ctx.db
        var out: [ItemsResponse.Item] = []
        for op in r.operations {
            do {
                switch op.type {
                case .create:
                    out.append(.value(try db.zoneJSON(try ZoneLifecycle(db).create(op.zoneName))))
                case .delete:
                    try ZoneLifecycle(db).delete(op.zoneName)
                    out.append(.value(["zoneID": db.zoneID(op.zoneName).json, "deleted": true]))
                }
            } catch var e as CloudKitError {
                // ck's --if-exists: a zone that is not there counts as deleted and is left out.
                if op.type == .delete && e.code == .zoneNotFound && r.ifExists { continue }
                if e.zoneID == nil { e.zoneID = db.zoneID(op.zoneName) }
                out.append(.failed(e))
            }
        }
        return ItemsResponse("zones", out, for: ctx.audience)
    }
}
