/// `records/accept`: the caller accepts shares by short GUID — an invited participant, or
/// anyone signed in when the share is public — and each share's zone joins their shared
/// database. One result per short GUID, in order: the ShortGUID Result dictionary, or an error
/// (NOT_FOUND, in the same words, for a short GUID no share has and for a share the caller
/// may not see: not invited to a share that is not public, or removed from it). Accepting
/// twice changes nothing.
public typealias AcceptSharesRequest = ShortGUIDsRequest

extension CloudKitAPI {
    public func acceptShares(_ r: AcceptSharesRequest, as caller: Caller) throws -> ItemsResponse {
        let guids = try r.shortGUIDs.map { try $0.shortGUID() }
        // Whatever database the caller names: accepted shares are the shared database's.
        let ctx = try preflight(.recordsAccept, caller.inDatabase(.shared), need: .write)
        return ItemsResponse("results", try zip(r.shortGUIDs, guids).map { req, guid in
            do {
                let accepted = try ctx.db.updateShare(try ctx.db.share(shortGUID: guid), .accept)
                return .value(try shortGUIDResult(accepted, req, ctx: ctx))
            } catch let e as CloudKitError {
                return .failed(e)
            }
        })
    }
}
