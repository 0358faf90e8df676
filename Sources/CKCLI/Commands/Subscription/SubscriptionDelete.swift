import CKCore

extension SubscriptionCommands {
    static let delete: Command = Command(["subscription", "delete"], synopsis: "ID…", summary: "Delete subscriptions", endpoint: .subscriptionsModify,
                                         details: "Every ID is checked first: one that is not there (NOT_FOUND) deletes nothing.") { inv in
        var seen = Set<NameKey>()
        let ids = try inv.positionals(min: 1, what: "subscription ID").filter { seen.insert(NameKey($0)).inserted }
        inv.print(try inv.api.modifySubscriptions(SubscriptionsModifyRequest(operations: ids.map { .delete($0) }), as: try inv.caller()))
        return ExitCode.success
    }
}
