import CKCore

/// `ck subscribe` (Notifications/Subscribe.swift), `ck subscription list|get|delete`.
enum SubscriptionCommands {
    static var all: [Command] { [subscribe, list, get, delete] }

    /// Runs subscriptions/modify for the operations, in requests of at most the operations one
    /// holds, and prints the subscriptions answered. Every operation is attempted: with one,
    /// its failure is the command's error; with several, the failed ones are error items and ck
    /// exits 9.
    static func modify(_ inv: Invocation, _ operations: [SubscriptionsModifyRequest.Operation], as caller: Caller? = nil) throws -> Int32 {
        let caller = try caller ?? inv.caller()
        var results: [ItemsResponse.Item] = []
        for start in stride(from: 0, to: operations.count, by: Limits.operationsPerBatch) {
            let chunk = Array(operations[start..<min(start + Limits.operationsPerBatch, operations.count)])
            results += try inv.api.modifySubscriptions(SubscriptionsModifyRequest(operations: chunk), as: caller).results
        }
        if operations.count == 1, let e = results.first?.error { throw e }
        let response = ItemsResponse("subscriptions", results)
        inv.print(response)
        return inv.batchExit(response.failures.map(OperationResult.failed), total: operations.count, noun: "subscriptions")
    }
}
