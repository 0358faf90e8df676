import CKModel
import CKStore

/// ck's stand-in for pushes lost on the way (`notifications drop`): the device's newest unread
/// notifications never arrive — never listed, nothing coalesces into them — while the changes
/// they told of stay in the feeds. Answers `{dropped: […]}`, oldest first (those the caller
/// may read). No client sends it: no endpoint, no fault.
public struct NotificationsDropRequest: Sendable {
    /// How many of the newest unread to drop; nil: every unread one.
    public var count: Int?

    public init(count: Int?) {
        self.count = count
    }
}

extension CloudKitAPI {
    public func dropNotifications(_ r: NotificationsDropRequest, as caller: Caller) throws -> DocumentBody {
        if let n = r.count, n < 1 { throw CloudKitError.badRequest("the number of notifications to drop must be at least 1") }
        let ctx = try preflight(nil, caller, need: .none)
        let dropped = try ctx.db.notifications.inbox().drop(newest: r.count)
        return DocumentBody(["dropped": .array(try NotificationGate(api: self, caller: caller).admit(dropped))], listKey: "dropped")
    }
}
