import CKCore

extension SubscriptionCommands {
    static let list: CommandSpec = CommandSpec(synopsis: "", summary: "List your subscriptions in a database") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.listSubscriptions(as: try inv.caller()))
        return ExitCode.success
    }
}
