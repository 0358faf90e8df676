/// Web Services takes at most `Limits.operationsPerBatch` operations in one `records/modify`,
/// `zones/modify` or `subscriptions/modify` request; more is LIMIT_EXCEEDED for the whole
/// request, nothing done, with the advice to split it.
enum OperationLimit {
    static func check(_ count: Int) throws {
        guard count > Limits.operationsPerBatch else { return }
        throw CloudKitError(.limitExceeded, "a request holds at most \(Limits.operationsPerBatch) operations; this one has \(count)")
            .with(.splitRequest(maxOperations: Limits.operationsPerBatch))
    }
}
