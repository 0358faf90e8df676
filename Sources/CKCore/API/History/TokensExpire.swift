import CKModel
import CKStore

/// ck's `token expire` (fault injection): drops a zone's retained history up to now, as
/// CloudKit's server does on its own schedule, so every token of the zone issued so far (and
/// every bookmark) is CHANGE_TOKEN_EXPIRED. The tokens are the zone owner's: in the shared
/// database it is ACCESS_DENIED, and nothing changes.
public struct ExpireTokensRequest: Sendable {
    public var zoneName: String

    public init(zoneName: String = ZoneID.defaultZoneName) { self.zoneName = zoneName }
}

extension CloudKitAPI {
    /// `{zoneID, syncToken}`: the zone's token now, which keeps working.
    public func expireTokens(_ r: ExpireTokensRequest, as caller: Caller) throws -> DocumentBody {
        try Names.validateZoneName(r.zoneName)
        let ctx = try preflight(nil, caller, need: .write)
        try ctx.requireOwnHistory("expiring a zone's change tokens")
        let token = try ctx.db.changes.expireTokens(zone: r.zoneName)
        return DocumentBody(["zoneID": ctx.db.zoneID(r.zoneName).json, "syncToken": .string(token)])
    }
}
