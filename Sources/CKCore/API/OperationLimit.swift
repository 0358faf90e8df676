/// Web Services takes at most `Limits.operationsPerBatch` operations in one `records/modify`,
/// `zones/modify` or `subscriptions/modify` request; more is LIMIT_EXCEEDED for the whole
/// request, nothing done, in CloudKit's words, with the way out: split the request.
enum OperationLimit {
    static func check(_ count: Int) throws {
        guard count > Limits.operationsPerBatch else { return }
        throw CloudKitError(.limitExceeded, "Your request contains \(count) items which is more than the maximum number of items in a single request (\(Limits.operationsPerBatch))")
            .with(.splitRequest(maxOperations: Limits.operationsPerBatch))
    }
}
