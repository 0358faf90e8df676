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
                return WebPush(body: DocumentBody(PushPayload.payload(n).objectValue ?? [:]), apnsToken: apnsToken, cursor: page.cursor)
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
}
