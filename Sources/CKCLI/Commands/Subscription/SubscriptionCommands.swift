import CKCore

/// `ck subscribe` (Commands/Subscribe.swift), `ck subscription list|get|delete`.
enum SubscriptionCommands {
    /// Runs subscriptions/modify for the operations (Invocation.modifyInBatches).
    static func modify(_ inv: Invocation, _ operations: [SubscriptionsModifyRequest.Operation], as caller: Caller? = nil) throws -> Int32 {
        let caller = try caller ?? inv.caller()
        return try inv.modifyInBatches(operations, key: "subscriptions") { try inv.api.modifySubscriptions(SubscriptionsModifyRequest(operations: $0), as: caller) }
    }
}
