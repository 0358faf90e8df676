import CKJSON
import CKModel
import CKStore

/// `subscriptions/modify`: saving and deleting the caller's subscriptions. A create saves the
/// subscription (an existing ID is replaced, as saving a CKSubscription again does); an update
/// replaces one that exists; a delete removes one. All operations are attempted, in order, as
/// in zones/modify: one that cannot be done (CloudKit's rules on which kinds each database
/// allows, the zone, the filters, that what is updated or deleted exists) is answered with
/// `{subscriptionID, serverErrorCode, reason}` in its place and the others are done. What is
/// wrong with the request itself (two operations on one subscription, more than the operations
/// a request holds, no account to write with) fails it whole and changes nothing.
public struct SubscriptionsModifyRequest: Sendable {
    public enum Operation: Sendable {
        case create(Subscription)
        case update(Subscription)
        case delete(String)

        var subscriptionID: String {
            switch self {
            case .create(let s), .update(let s): return s.subscriptionID
            case .delete(let id): return id
            }
        }
    }

    public var operations: [Operation]

    public init(operations: [Operation]) {
        self.operations = operations
    }

    /// The Web Services body: `{operations: [{operationType: create|update|delete, subscription: {…}}]}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "subscriptions/modify request", keys: ["operations"])
        let list = try RequestBody.array(o["operations"], "operations")
        operations = try list.enumerated().map { i, item in
            let op = try RequestBody.object(item, "operations[\(i)]", keys: ["operationType", "subscription"])
            guard let t = op["operationType"]?.stringValue, ["create", "update", "delete"].contains(t) else {
                throw CloudKitError.badRequest("operations[\(i)]: operationType must be create, update or delete")
            }
            guard let sj = op["subscription"], !sj.isNull else { throw CloudKitError.badRequest("operations[\(i)] needs a 'subscription'") }
            let what = "operations[\(i)].subscription"
            if t == "delete" {
                // CloudKit JS sends only the ID; a whole subscription (as printed) is taken too.
                let so = try RequestBody.object(sj, what, keys: Subscription.keys)
                guard let id = try RequestBody.string(so["subscriptionID"], "\(what).subscriptionID") else {
                    throw CloudKitError.badRequest("\(what) needs a 'subscriptionID' to delete")
                }
                try Subscription.validateID(id)
                return .delete(id)
            }
            let s = try Subscription(json: sj, what)
            if t == "update" && s.subscriptionID.isEmpty { throw CloudKitError.badRequest("\(what) needs a 'subscriptionID' to update") }
            return t == "create" ? .create(s) : .update(s)
        }
    }
}

extension CloudKitAPI {
    public func modifySubscriptions(_ r: SubscriptionsModifyRequest, as caller: Caller) throws -> ItemsResponse {
        try Limits.checkItems(r.operations.count)
        // A subscription saved without an ID gets its default one: saving the same
        // subscription again replaces it instead of adding another.
        let operations: [SubscriptionsModifyRequest.Operation] = r.operations.map { op in
            switch op {
            case .create(var s) where s.subscriptionID.isEmpty:
                s.subscriptionID = s.defaultID
                return .create(s)
            default: return op
            }
        }
        var seen = Set<NameKey>()
        for op in operations where !seen.insert(NameKey(op.subscriptionID)).inserted {
            throw CloudKitError(.badRequest, "subscription '\(Names.describe(op.subscriptionID))' appears in more than one operation; a request takes one operation per subscription",
                                subscriptionID: op.subscriptionID)
        }
        let zones: [String] = operations.compactMap { if case .create(let s) = $0 { return s.zoneName }; if case .update(let s) = $0 { return s.zoneName }; return nil }
        let ctx = try preflight(.subscriptionsModify, caller, zones: zones, need: .write)
        let db = ctx.db
        var out: [ItemsResponse.Item] = []
        for op in operations {
            do {
                switch op {
                case .create(let s):
                    out.append(.value(db.subscriptions.json(try db.subscriptions.save(s))))
                case .update(let s):
                    _ = try db.subscriptions.get(s.subscriptionID)
                    out.append(.value(db.subscriptions.json(try db.subscriptions.save(s))))
                case .delete(let id):
                    try db.subscriptions.delete(id)
                    out.append(.value(["subscriptionID": .string(id), "deleted": true]))
                }
            } catch var e as CloudKitError {
                if e.subscriptionID == nil { e.subscriptionID = op.subscriptionID }
                out.append(.failed(e))
            }
        }
        return ItemsResponse("subscriptions", out, for: ctx.audience)
    }
}
