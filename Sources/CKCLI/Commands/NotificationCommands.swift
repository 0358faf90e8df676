import CKCore

/// `ck notifications`: the device's pending notifications, or a live feed of them.
enum NotificationCommands {
    static var all: [Command] { [notifications] }

    static let notifications: Command = Command(["notifications"], synopsis: "[--mark-read] [--follow [--timeout S]]",
        summary: "List this device's unread notifications (or follow them as they arrive)",
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
}
