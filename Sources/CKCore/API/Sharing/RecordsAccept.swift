import CKModel
import CKStore

/// `records/accept`: the caller accepts shares by short GUID — an invited participant, or
/// anyone signed in when the share is public — and each share's zone joins their shared
/// database. One result per short GUID, in order: the ShortGUID Result dictionary, or an error
/// (NOT_FOUND, in the same words, for a short GUID no share has and for a share the caller
/// may not see: not invited to a share that is not public, or removed from it). Accepting
/// twice changes nothing. ck addresses a shared zone by its name alone (CloudKit by zoneName and
/// ownerRecordName), so a share whose zone has the name of a zone another owner already shares
/// with the caller is refused: BAD_REQUEST, naming that owner, with the way out (leave that
/// share first); the shares already accepted keep serving.
public typealias AcceptSharesRequest = ShortGUIDsRequest

extension CloudKitAPI {
    public func acceptShares(_ r: AcceptSharesRequest, as caller: Caller) throws -> ItemsResponse {
        let guids = try r.shortGUIDs.map { try $0.shortGUID() }
        // Whatever database the caller names: accepted shares are the shared database's.
        let ctx = try preflight(.recordsAccept, caller.inDatabase(.shared), need: .write)
        return ItemsResponse("results", try zip(r.shortGUIDs, guids).map { req, guid in
            do {
                let loc = try Shares(ctx.db).share(shortGUID: guid)
                try ctx.db.sharedDatabase?.refuseZoneNameClash(loc)
                let accepted = try Shares(ctx.db).updateShare(loc, .accept)
                ctx.db.sharedDatabase?.forgetSharedZones()
                return .value(try shortGUIDResult(accepted, req, ctx: ctx))
            } catch let e as CloudKitError {
                return .failed(e)
            }
        }, for: ctx.audience)
    }
}
