import CKJSON
import CKModel
import CKStore

/// `subscriptions/lookup`: the caller's subscriptions by ID, one result per ID in order: the
/// subscription, or NOT_FOUND naming it.
public struct SubscriptionsLookupRequest: Sendable {
    public var subscriptionIDs: [String]

    public init(subscriptionIDs: [String]) {
        self.subscriptionIDs = subscriptionIDs
    }

    /// The Web Services body: `{subscriptions: [{subscriptionID}]}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "subscriptions/lookup request", keys: ["subscriptions"])
        subscriptionIDs = try RequestBody.array(o["subscriptions"], "subscriptions").enumerated().map { i, item in
            let s = try RequestBody.object(item, "subscriptions[\(i)]", keys: ["subscriptionID"])
            guard let id = try RequestBody.string(s["subscriptionID"], "subscriptions[\(i)].subscriptionID") else {
                throw CloudKitError.badRequest("subscriptions[\(i)] needs a 'subscriptionID' string")
            }
            try Subscription.validateID(id)
            return id
        }
    }
}

extension CloudKitAPI {
    public func lookupSubscriptions(_ r: SubscriptionsLookupRequest, as caller: Caller) throws -> ItemsResponse {
        for id in r.subscriptionIDs { try Subscription.validateID(id) }
        let ctx = try preflight(.subscriptionsLookup, caller, need: .none)
        return ItemsResponse("subscriptions", try r.subscriptionIDs.map { id in
            do { return .value(ctx.db.subscriptions.json(try ctx.db.subscriptions.get(id))) } catch let e as CloudKitError where e.code == .notFound {
                return .failed(e)
            }
        }, for: ctx.audience)
    }
}
