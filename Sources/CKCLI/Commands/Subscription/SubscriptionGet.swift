import CKCore

extension SubscriptionCommands {
    static let get: CommandSpec = CommandSpec(synopsis: "ID", summary: "Show one subscription (subscriptions/lookup)") { inv in
        let id = try inv.positionals(min: 1, max: 1, what: "subscription ID")[0]
        let response = try inv.api.lookupSubscriptions(SubscriptionsLookupRequest(subscriptionIDs: [id]), as: try inv.caller())
        if let e = response.failures.first { throw e }
        inv.print(response)
        return ExitCode.success
    }
}
