import CKModel
import CKStore

/// `subscriptions/list` (GET): the caller's subscriptions in the database, by ID.
extension CloudKitAPI {
    public func listSubscriptions(as caller: Caller) throws -> ItemsResponse {
        let ctx = try preflight(.subscriptionsList, caller, need: .none)
        return ItemsResponse("subscriptions", try ctx.db.subscriptions.list().map { .value(ctx.db.subscriptions.json($0)) }, for: ctx.audience)
    }
}
