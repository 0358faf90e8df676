import CKModel
import CKStore

/// `records/resolve`: what a share's short GUID leads to (CloudKit JS `fetchRecordInfos`,
/// native share metadata), without accepting it. One result per short GUID, in order: the
/// ShortGUID Result dictionary with the share as the caller may see it (ShareView: all its
/// participants for the owner and invited users, the owner and themselves for someone holding
/// a public share's URL), or NOT_FOUND in the same words for a short GUID no share has and for
/// a share the caller may not see. Needs no account: nobody signed in sees public shares.
public typealias ResolveSharesRequest = ShortGUIDsRequest

extension CloudKitAPI {
    public func resolveShares(_ r: ResolveSharesRequest, as caller: Caller) throws -> ItemsResponse {
        let guids = try r.shortGUIDs.map { try $0.shortGUID() }
        // Web Services sends it to the public database, whatever database the caller names.
        let ctx = try preflight(.recordsResolve, caller.inDatabase(.public), need: .none)
        return ItemsResponse("results", try zip(r.shortGUIDs, guids).map { req, guid in
            do { return .value(try shortGUIDResult(try Shares(ctx.db).share(shortGUID: guid), req, ctx: ctx)) } catch let e as CloudKitError where e.code == .notFound {
                return .failed(e)
            }
        }, for: ctx.audience)
    }
}
