import CKModel
import CKStore

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
    /// How many web clients' inboxes one user keeps (per container environment). Each load of a
    /// CloudKit JS page that registers for notifications is a new web client — its configure()
    /// makes a new clientId — and every change the user's subscriptions fire on is written to
    /// every inbox: kept for good, they made each save slower with every page load.
    public static let webInboxesPerUser = 64

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
        try watchWebPush(container: container, environment: environment, apnsToken: apnsToken, afterReadingToken: {})
    }

    /// `afterReadingToken`: what happens between reading the token and answering (tests: a
    /// binding in that instant).
    func watchWebPush(container: String, environment: Environment, apnsToken: String,
                      afterReadingToken: () throws -> Void) throws -> (client: WebPushClient, watch: WebPushWatch) {
        let clients = WebClients(paths: store.paths, container: container, environment: environment)
        // The registrations are watched before the token is read: a binding between the two
        // would otherwise wake nothing, and the poll would wait out its time for nothing.
        let registrations = try WebPushWatch(directory: clients.directory, inbox: false)
        let client = try webClient(clients, apnsToken)
        let found = WebPushClient(client)
        try afterReadingToken()
        guard let user = client.userRecordName else { return (found, registrations) }
        let inbox = NotificationInbox(directory: store.paths.notifications(container, environment, user: user) + "/" + PathEncoding.component(client.deviceID))
        // Registered when the token was bound; made again if it went (an environment reset, or
        // retired for newer web clients: it is then the newest).
        if !inbox.isRegistered, let device = webDevice(client, container: container, environment: environment) {
            _ = try listNotifications(NotificationsRequest(limit: 0), as: device)
            try keepNewestWebInboxes(device, owner: user)
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

    /// Dates the inbox of web client `device` of user `owner`, just registered, and removes the
    /// inboxes of the user's web clients past the newest `webInboxesPerUser` (by when each was
    /// registered; one of an older ck, undated, first). A retired client's push token stays
    /// bound: its next poll makes its inbox again.
    func keepNewestWebInboxes(_ device: Caller, owner: String) throws {
        let root = store.paths.notifications(device.container, device.environment, user: owner)
        try NotificationInbox(directory: root + "/" + PathEncoding.component(device.deviceID)).markRegistered(at: clock.now())
        var web: [(registered: Int64, inbox: NotificationInbox)] = []
        for entry in try FileSystem.list(root) where (PathEncoding.decodeSimple(entry) ?? entry).hasPrefix("web-") {
            let box = NotificationInbox(directory: root + "/" + entry)
            guard box.isRegistered else { continue }
            web.append(((try? box.state())?.registered ?? 0, box))
        }
        guard web.count > Self.webInboxesPerUser else { return }
        let newestFirst = web.sorted { ($0.registered, $0.inbox.directory) > ($1.registered, $1.inbox.directory) }
        for old in newestFirst.dropFirst(Self.webInboxesPerUser) { try old.inbox.remove() }
    }

    /// The device a web client bound to a user is: its inbox is the user's pushes to it.
    private func webDevice(_ client: WebClients.Client, container: String, environment: Environment) -> Caller? {
        client.userRecordName.map { Caller(container: container, environment: environment, scope: .private, user: .userRecordName($0), deviceID: client.deviceID) }
    }
}

/// What a long-poll waits on: a readable descriptor that a delivery to the push token's inbox
/// wakes (the store's inotify watch). Named here, in the API, so that the server waiting on it
/// imports the API alone.
public typealias WebPushWatch = CKStore.WebPushWatch
