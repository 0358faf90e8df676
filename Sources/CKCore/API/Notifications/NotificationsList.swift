import CKJSON
import CKModel
import CKStore

/// The notifications a device received (what pushes deliver; native `CKNotification`s): its
/// inbox, read from its first unread notification or from where an earlier read ended. Reading
/// registers the device for notifications, as registering for pushes does. Every
/// notification passes the permission gate: a query notification naming a record the caller
/// may no longer read (a public record whose type's GRANTs changed) is left out.
public struct NotificationsRequest: Sendable {
    /// Where to read from: nil, the device's first unread notification; else the cursor an
    /// earlier answer ended at (`--follow` reads on from there).
    public var after: NotificationCursor?
    /// At most this many (a web client's long-poll takes one at a time); nil: every one.
    public var limit: Int?

    public init(after: NotificationCursor? = nil, limit: Int? = nil) {
        self.after = after
        self.limit = limit
    }
}

/// A point in a device's notification inbox: where an answer ended.
public struct NotificationCursor: Sendable, Equatable {
    let offset: Int64
}

/// `{notifications: […]}`, oldest first; `cursor` is where it ended (for the next read, and
/// for marking them read).
public struct NotificationsResponse: ResponseBody {
    public var notifications: [JSONValue]
    /// Where the answer ended.
    public var cursor: NotificationCursor
    /// Whether it read anything (notifications, or ones the caller may not see or dropped):
    /// marking read up to `cursor` then moves the device's read mark.
    public var advanced: Bool

    public var listKey: String? { "notifications" }
    public var members: [String: JSONValue] { [:] }
    public var items: [any JSONEncodable] { notifications }
}

extension CloudKitAPI {
    public func listNotifications(_ r: NotificationsRequest, as caller: Caller) throws -> NotificationsResponse {
        let ctx = try preflight(.notificationsList, caller, need: .none)
        let box = try ctx.db.notifications.inbox()
        try box.register()
        let start = try r.after?.offset ?? box.unreadOffset()
        let (notes, end) = try box.read(from: start, limit: r.limit)
        return NotificationsResponse(notifications: try NotificationGate(api: self, caller: caller).admit(notes), cursor: NotificationCursor(offset: end),
                                     advanced: end > start)
    }

    /// Marks the device's notifications read up to `cursor` (the end of an answer of
    /// `listNotifications`): they are no longer unread, and later database and zone
    /// notifications no longer coalesce into them.
    public func markNotificationsRead(through cursor: NotificationCursor, as caller: Caller) throws {
        let ctx = try preflight(nil, caller, need: .none)
        try ctx.db.notifications.inbox().markRead(through: cursor.offset)
    }
}

/// The permission gate for notifications: a query notification names a record (public
/// database: as its type's GRANTs let the caller read it now; private: the caller's own). The
/// others name a zone or nothing.
struct NotificationGate {
    let api: CloudKitAPI
    let caller: Caller

    func admit(_ notes: [JSONValue]) throws -> [JSONValue] {
        var dbs: [DatabaseScope: Database] = [:]
        return try notes.filter { n in
            guard let name = n["recordName"]?.stringValue, let zone = n["zoneID"]?["zoneName"]?.stringValue,
                  let scope = n["databaseScope"]?.stringValue.flatMap(DatabaseScope.init(rawValue:)), scope == .public,
                  n["containerIdentifier"]?.stringValue == caller.container else { return true }
            let db: Database
            if let d = dbs[scope] { db = d } else {
                db = try api.store.database(DatabaseAddress(container: caller.container, environment: caller.environment, scope: scope),
                                            principal: try api.principal(caller))
                dbs[scope] = db
            }
            guard let z = try? db.zone(zone), let r = try z.record(named: name) else { return true }
            return try db.canRead(r)
        }
    }
}
