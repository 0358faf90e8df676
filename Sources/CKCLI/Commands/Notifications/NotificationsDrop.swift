import CKCore

extension NotificationCommands {
    static let drop: CommandSpec = CommandSpec(synopsis: "[--count N | --all]",
        summary: "Lose this device's newest unread notifications, as a dropped push (fault injection)",
        options: [
            OptionSpec("--count", value: "N", help: "drop the N newest unread notifications [default: 1]"),
            OptionSpec("--all", help: "drop every unread notification"),
        ],
        details: """
        The newest unread notifications of this device (--device, $CK_DEVICE) never arrive:
        'ck notifications' (and --follow) never lists them, and later database and zone
        notifications do not coalesce into them, so the next change notifies afresh. The changes
        they told of are still there for 'ck zone changes' and 'ck database changes' to find:
        an app that fetches from its token on the next notification (or on launch) catches up.
        The newest go first, so 'ck record save …; ck notifications drop' loses exactly the
        notification that save sent (one per matching subscription: --count N for more). Prints
        {"dropped": [notification, …]}, oldest first; with nothing unread, {"dropped": []} and
        nothing changes. To drop deliveries as they happen, at a rate, see 'ck fault add --op
        notifications/deliver'.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let count = try inv.positiveInt("--count")
        if count != nil && inv.args.has("--all") { throw inv.usageError("--count and --all exclude each other") }
        let req = NotificationsDropRequest(count: inv.args.has("--all") ? nil : count ?? 1)
        inv.print(try inv.api.dropNotifications(req, as: try inv.caller()))
        return ExitCode.success
    }
}
