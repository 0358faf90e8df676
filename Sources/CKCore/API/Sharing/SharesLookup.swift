import CKModel
import CKStore

/// ck's `share get` and `share list`: share records, as the caller may see them (ShareView).
/// `share get` stands for records/lookup of a share record, `share list` for records/query of
/// share records; both answer `{records: [share]}` with `currentUserParticipant` where the
/// caller takes part. A share the caller may not see is NOT_FOUND in the words an unknown short
/// GUID gets, and is never listed.
public struct ShareLookupRequest: Sendable {
    /// A share URL or short GUID; or, with `zoneName`, the share record's name or the name of
    /// the record it shares; nil with `zoneName`: the zone's share.
    public var reference: String?
    public var zoneName: String?

    public init(reference: String?, zoneName: String? = nil) {
        self.reference = reference
        self.zoneName = zoneName
    }
}

/// In the private database the shares the caller owns; in the shared database those they are
/// invited to or accepted (how an invited user finds the short GUID to accept).
public struct ShareListRequest: Sendable {
    /// Only the shares of this zone.
    public var zoneName: String?

    public init(zoneName: String? = nil) {
        self.zoneName = zoneName
    }
}

extension CloudKitAPI {
    public func lookupShare(_ r: ShareLookupRequest, as caller: Caller) throws -> ItemsResponse {
        let ctx = try preflight(.recordsLookup, caller, zones: [r.zoneName ?? ZoneID.defaultZoneName])
        let loc = try Shares(ctx.db).findShare(r.reference, zone: r.zoneName)
        guard let shown = loc.json(shownTo: ctx.db.me, style: ctx.style) else { throw Shares.unknownShortGUID(loc.share.shortGUID ?? "") }
        return ItemsResponse("records", [.value(shown)], for: ctx.audience)
    }

    public func listShares(_ r: ShareListRequest, as caller: Caller) throws -> ItemsResponse {
        let ctx = try preflight(.recordsQuery, caller, zones: [r.zoneName ?? ZoneID.defaultZoneName])
        let shares = try Shares(ctx.db).listShares(zone: r.zoneName)
        return ItemsResponse("records", shares.compactMap { $0.json(shownTo: ctx.db.me, style: ctx.style).map { .value($0) } }, for: ctx.audience)
    }
}
