import CKCore

extension SubscriptionCommands {
    static let list: Command = Command(["subscription", "list"], synopsis: "", summary: "List your subscriptions in a database", endpoint: .subscriptionsList) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listSubscriptions(as: try inv.caller()))
        return ExitCode.success
    }
}
