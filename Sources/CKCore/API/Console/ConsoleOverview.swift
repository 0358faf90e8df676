import CKJSON
import Foundation
import CKModel
import CKStore

/// What the console's navigator starts from, which Web Services has no endpoint for: the
/// data directory's containers and their environments, the users a console may act as (those
/// who signed in on this device, as `--as` takes them), and the device's own account.
extension CloudKitAPI {
    /// `{containers: [{containerIdentifier, environments: ["development", …]}],
    /// defaultContainer?, device: {status, appleID?, userRecordName?}, users: [{appleID,
    /// userRecordName, name?}]}`. Reads directory names and the account files only: a store of
    /// any size answers at once.
    public func consoleOverview() throws -> DocumentBody {
        let containers: [JSONValue] = try store.containers().map { c in
            ["containerIdentifier": .string(c.id), "environments": .array(c.environments.map { .string($0.rawValue) })]
        }
        var o: [String: JSONValue] = ["containers": .array(containers)]
        if let d = try defaultContainer() { o["defaultContainer"] = .string(d) }
        o["device"] = .object(statusBody(try principal(.device, deviceID: Caller.consoleDevice)).document)
        o["users"] = try webSignInUsers().document["users"] ?? .array([])
        return DocumentBody(o, listKey: "containers")
    }
}

extension Caller {
    /// The device the console's writes are recorded as coming from (`modified.deviceID`), so
    /// the history says a change was made in the console.
    public static let consoleDevice = "console"

    /// The console acting in a database as the device's account, or as a user who signed in
    /// here (`appleID`; nil or empty, the page's "this device"): the same caller `--as` makes,
    /// so the same permission gate applies.
    public static func console(container: String, environment: Environment, scope: DatabaseScope, appleID: String?) -> Caller {
        let user: User = appleID.flatMap { $0.isEmpty ? nil : .appleID($0) } ?? .device
        return Caller(container: container, environment: environment, scope: scope, user: user, deviceID: consoleDevice)
    }
}

extension CloudKitAPI {
    /// A point of history as a front end without a shell's `TZ` gives it (the console): read
    /// with this API's clock and the server's local time zone.
    public func historyReference(_ raw: String) throws -> HistoryReference {
        try HistoryReference.parse(raw, now: clock.now(), timeZone: TimeZone.current)
    }
}

extension CloudKitAPI {
    /// The caller's device's unread notifications (at most `limit`), then marked read: a feed
    /// that takes each notification once, as the console's does for its device `console`.
    /// The first call registers the device, as `ck notifications` does: it is notified of the
    /// changes made after.
    public func takeNotifications(limit: Int, as caller: Caller) throws -> NotificationsResponse {
        let answer = try listNotifications(NotificationsRequest(limit: limit), as: caller)
        if answer.advanced { try markNotificationsRead(through: answer.cursor, as: caller) }
        return answer
    }
}
