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

/// A web client as its long-poll needs it: who made its push token, and what to watch for its
/// next notification.
public struct WebPushClient: Sendable {
    /// The credential `tokens/create` was called with (`Caller.credential`); nil for a token
    /// made before ck recorded it.
    public var issuer: String?
    /// Whether the token is bound to a user yet (`tokens/register`): until it is, no
    /// notification comes.
    public var isBound: Bool
}

extension WebPushClient {
    init(_ client: WebClients.Client) {
        self.init(issuer: client.issuer, isBound: client.userRecordName != nil)
    }
}

extension CloudKitAPI {
    /// The web client of push token `apnsToken`; NOT_FOUND for a token `tokens/create` did not
    /// make in this container and environment.
    public func webPushClient(container: String, environment: Environment, apnsToken: String) throws -> WebPushClient {
        WebPushClient(try webClient(WebClients(paths: store.paths, container: container, environment: environment), apnsToken))
    }

    /// What wakes a long-poll of `apnsToken` when its next notification may be there: a
    /// change to its inbox (or, before the token is bound to a user, to the web clients'
    /// registrations: once it is, the poll ends and the next one watches the inbox), by this
    /// process or another. Made before the poll first looks, so a notification delivered in
    /// between still wakes it. With the client as `webPushClient` answers it.
    public func watchWebPush(container: String, environment: Environment, apnsToken: String) throws -> (client: WebPushClient, watch: WebPushWatch) {
        let clients = WebClients(paths: store.paths, container: container, environment: environment)
        let client = try webClient(clients, apnsToken)
        let found = WebPushClient(client)
        guard let user = client.userRecordName else { return (found, try WebPushWatch(directory: clients.directory, inbox: false)) }
        let inbox = NotificationInbox(directory: store.paths.notifications(container, environment, user: user) + "/" + PathEncoding.component(client.deviceID))
        // Registered when the token was bound; made again if it went (an environment reset).
        if try !FileSystem.isDirectory(inbox.directory), let device = webDevice(client, container: container, environment: environment) {
            _ = try listNotifications(NotificationsRequest(limit: 0), as: device)
        }
        return (found, try WebPushWatch(directory: inbox.directory, inbox: true))
    }

    private func webClient(_ clients: WebClients, _ apnsToken: String) throws -> WebClients.Client {
        guard let client = try clients.load(apnsToken) else {
            throw CloudKitError(.notFound, "no push token '\(Names.describe(apnsToken))' was made by tokens/create in this container and environment")
        }
        return client
    }

    /// The oldest unread notification of the web client `apnsToken`; nil when none waits (the
    /// server waits and asks again) or the token is not bound to a user yet. An unknown token
    /// is NOT_FOUND.
    public func nextWebPush(container: String, environment: Environment, apnsToken: String) throws -> WebPush? {
        let client = try webClient(WebClients(paths: store.paths, container: container, environment: environment), apnsToken)
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
