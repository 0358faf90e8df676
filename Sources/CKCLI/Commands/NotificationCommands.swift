import CKCore

/// `ck notifications`: the device's pending notifications, or a live feed of them;
/// `ck notifications drop`: losing some on the way, as pushes are lost.
enum NotificationCommands {
    static var all: [Command] { [notifications, drop] }

    static let notifications: Command = Command(["notifications"], synopsis: "[--mark-read] [--follow [--timeout S]]",
        summary: "List this device's unread notifications (or follow them as they arrive)", endpoint: "notifications/list",
        options: [
            OptionSpec("--mark-read", help: "mark the notifications printed as read"),
            OptionSpec("--follow", help: "keep running and print each new notification as an NDJSON line (whatever --format)"),
            OptionSpec("--timeout", value: "S", help: "with --follow: stop after S seconds"),
        ],
        details: """
        Prints {notifications: [...]}: each has notificationID, notificationType (database,
        recordZone or query), subscriptionID, containerIdentifier, databaseScope, and zoneID,
        recordName and queryNotificationReason (recordCreated, recordUpdated, recordDeleted)
        where they apply. Unread database and zone notifications coalesce into one: a
        notification says something changed; fetch the changes to learn what. Running this
        command (or 'ck subscribe') registers the device (--device) for notifications.
        With --follow, unread notifications are printed first, then new ones as they arrive;
        ck exits 0 at the timeout or on SIGINT or SIGTERM, and 141 within a second of the reader
        closing the pipe. With --mark-read, notifications are marked read only once they have
        been written (and, on a pipe, read).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let timeout = try Follow.parseTimeout(inv)
        let box = try inv.database().notificationInbox()
        try box.register()
        var offset = try box.unreadOffset()
        let markRead = inv.args.has("--mark-read")
        guard inv.args.has("--follow") else {
            let (notes, end) = try box.read(from: offset)
            inv.emit(["notifications": .array(notes)], listKey: "notifications")
            if markRead { try inv.afterOutput { try box.markRead(through: end) } }
            return ExitCode.success
        }
        try Follow.run(io: inv.io, timeout: timeout) {
            let (notes, end) = try box.read(from: offset)
            for n in notes { inv.io.writeOut(JSONWriter.line(n)) }
            if markRead && end > offset { try inv.afterOutput { try box.markRead(through: end) } }
            offset = end
        }
        return ExitCode.success
    }

    static let drop: Command = Command(["notifications", "drop"], synopsis: "[--count N | --all]",
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
        let box = try inv.database().notificationInbox()
        let dropped = try box.drop(newest: inv.args.has("--all") ? nil : count ?? 1)
        inv.emit(["dropped": .array(dropped)], listKey: "dropped")
        return ExitCode.success
    }
}
