/// A web client's long-poll (`GET webcourierURL`, CloudKit JS's `registerForNotifications`):
/// the next notification for its push token, as Apple's web courier delivers it and
/// `CloudKit.parseRawNotification` reads it —
/// `{ck: {cid, nid, qry|fet|met: {dbs, sid, …}}, aps: {alert?: {body}, content-available?}}`.
/// The server sends it, then acknowledges it (output first, then state): a poll that fails in
/// between gets the same notification again.
public struct WebPush {
    public var body: DocumentBody
    let apnsToken: String
    let cursor: NotificationCursor
}

extension CloudKitAPI {
    /// The oldest unread notification of the web client `apnsToken`; nil when none waits (the
    /// server waits and asks again) or the token is not bound to a user yet. An unknown token
    /// is NOT_FOUND.
    public func nextWebPush(container: String, environment: Environment, apnsToken: String) throws -> WebPush? {
        guard let client = try WebClients(paths: store.paths, container: container, environment: environment).load(apnsToken) else {
            throw CloudKitError(.notFound, "no push token '\(Names.describe(apnsToken))' was made by tokens/create in this container and environment")
        }
        guard let device = webDevice(client, container: container, environment: environment) else { return nil }
        var after: NotificationCursor?
        while true {
            let page = try listNotifications(NotificationsRequest(after: after, limit: 1), as: device)
            if let n = page.notifications.first {
                return WebPush(body: DocumentBody(Self.webPushPayload(n)), apnsToken: apnsToken, cursor: page.cursor)
            }
            guard page.advanced else { return nil }
            // One the gate kept back (a record the user may no longer read): read past it.
            try markNotificationsRead(through: page.cursor, as: device)
            after = page.cursor
        }
    }

    /// Marks a push delivered: the client's next poll gets the one after it.
    public func acknowledgeWebPush(_ push: WebPush, container: String, environment: Environment) throws {
        guard let client = try WebClients(paths: store.paths, container: container, environment: environment).load(push.apnsToken),
              let device = webDevice(client, container: container, environment: environment) else { return }
        try markNotificationsRead(through: push.cursor, as: device)
    }

    /// The device a web client bound to a user is: its inbox is the user's pushes to it.
    private func webDevice(_ client: WebClients.Client, container: String, environment: Environment) -> Caller? {
        client.userRecordName.map { Caller(container: container, environment: environment, scope: .private, user: .userRecordName($0), deviceID: client.deviceID) }
    }

    /// A notification as ck lists it, in the short keys of a push payload: `dbs` 0 public,
    /// 1 private, 2 shared; `fo` 1 created, 2 updated, 3 deleted; `zid`/`zoid` the zone and its
    /// owner; `qry` a query subscription's, `fet` a zone's, `met` a database's.
    static func webPushPayload(_ n: JSONValue) -> [String: JSONValue] {
        var detail: [String: JSONValue] = [:]
        let dbs: Int64 = ["public": 0, "private": 1, "shared": 2][n["databaseScope"]?.stringValue ?? ""] ?? 1
        detail["dbs"] = .int(dbs)
        if let s = n["subscriptionID"] { detail["sid"] = s }
        if let z = n["zoneID"]?["zoneName"] { detail["zid"] = z }
        if let o = n["zoneID"]?["ownerRecordName"] { detail["zoid"] = o }
        if let r = n["recordName"] { detail["rid"] = r }
        if let reason = n["queryNotificationReason"]?.stringValue {
            detail["fo"] = .int(["recordCreated": 1, "recordUpdated": 2, "recordDeleted": 3][reason] ?? 2)
        }
        let kind = ["query": "qry", "recordZone": "fet", "database": "met"][n["notificationType"]?.stringValue ?? ""] ?? "met"
        var ck: [String: JSONValue] = [kind: .object(detail)]
        if let c = n["containerIdentifier"] { ck["cid"] = c }
        if let id = n["notificationID"] { ck["nid"] = id }
        var aps: [String: JSONValue] = [:]
        if let body = n["alertBody"] { aps["alert"] = ["body": body] }
        if n["contentAvailable"]?.boolValue == true { aps["content-available"] = 1 }
        return ["ck": .object(ck), "aps": .object(aps)]
    }
}
