import CKCore
import CKJSON
import CKModel

extension NotificationCommands {
    static let notifications: CommandSpec = CommandSpec(synopsis: "[--mark-read] [--follow [--timeout S]]",
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
        where they apply, and what its subscription's notificationInfo adds (alertBody, title,
        soundName, badge, recordFields, …). --format aps prints instead the push payload a device
        receives for each, one a line: {"aps": {alert, sound, badge, category,
        content-available, mutable-content}, "ck": {cid, nid, qry|fet|met: {dbs, sid, zid,
        zoid, rid, fo, af}}}. Unread database and zone notifications coalesce into one: a
        notification says something changed; fetch the changes to learn what. Running this
        command (or 'ck subscribe') registers the device (--device) for notifications.
        With --follow, unread notifications are printed first, then new ones as they arrive;
        ck exits 0 at the timeout or on SIGINT or SIGTERM, and 141 within a second of the reader
        closing the pipe. With --mark-read, notifications are marked read only once they have
        been written (and, on a pipe, read).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let timeout = try Follow.parseTimeout(inv)
        let markRead = inv.args.has("--mark-read")
        let caller = try inv.caller()
        let first = try inv.api.listNotifications(NotificationsRequest(), as: caller)
        // The push each one came as, as a device receives it: one payload a line.
        let aps = inv.globals.format == .aps
        let line: (JSONValue) -> String = { aps ? JSONWriter.line(PushPayload.payload($0)) : JSONWriter.line($0) }
        guard inv.args.has("--follow") else {
            if aps { first.notifications.forEach { inv.io.writeOut(line($0)) } } else { inv.print(first) }
            if markRead { try inv.afterOutput { try inv.api.markNotificationsRead(through: first.cursor, as: caller) } }
            return ExitCode.success
        }
        var page: NotificationsResponse? = first
        var cursor = first.cursor
        try Follow.run(io: inv.io, timeout: timeout) {
            let read = try page ?? inv.api.listNotifications(NotificationsRequest(after: cursor), as: caller)
            page = nil
            for n in read.notifications { inv.io.writeOut(line(n)) }
            if markRead && read.advanced { try inv.afterOutput { try inv.api.markNotificationsRead(through: read.cursor, as: caller) } }
            cursor = read.cursor
        }
        return ExitCode.success
    }
}
