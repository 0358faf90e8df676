import CKJSON
import CKModel
import CKStore

/// `zones/lookup`: zones by name, one result per name in order: the zone, or ZONE_NOT_FOUND
/// (also for a zone of the shared database the caller has not accepted).
public struct ZonesLookupRequest: Sendable {
    public var zoneNames: [String]

    public init(zoneNames: [String]) {
        self.zoneNames = zoneNames
    }

    /// The Web Services body: `{zones: [{zoneName, ownerRecordName?}]}` (zone ID dictionaries).
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "zones/lookup request", keys: ["zones"])
        let list = try RequestBody.array(o["zones"], "zones")
        zoneNames = try list.enumerated().map { i, item in try RequestBody.zoneID(item, "zones[\(i)]").zoneName }
    }
}

extension CloudKitAPI {
    public func lookupZones(_ r: ZonesLookupRequest, as caller: Caller) throws -> ItemsResponse {
        for n in r.zoneNames { try Names.validateZoneName(n) }
        let ctx = try preflight(.zonesLookup, caller, zones: r.zoneNames)
        return ItemsResponse("zones", try r.zoneNames.map { n in
            do { return .value(try ctx.db.zoneJSON(try ctx.db.zone(n))) } catch let e as CloudKitError where e.code == .zoneNotFound {
                return .failed(e)
            }
        }, for: ctx.audience)
    }
}
