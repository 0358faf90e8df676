import CKCrypto
import CKJSON
import CKModel
import CKStore

/// `tokens/create` and `tokens/register` (module `device`, reference §3.6; CloudKit JS's
/// `registerForNotifications`): a web client gets a push token and a `webcourierURL` to
/// long-poll; bound to a signed-in user (at creation, or by `tokens/register`), it is one of
/// that user's devices, so every subscription of theirs that fires reaches it. That device is
/// the one the client's own requests come from (`web-<clientId>`), so a change the client
/// made is not pushed back to it, as CloudKit leaves out the device a change came from.
public struct TokensCreateRequest: Sendable {
    public var apnsEnvironment: String
    public var clientID: String?

    public init(apnsEnvironment: String = "development", clientID: String? = nil) {
        self.apnsEnvironment = apnsEnvironment
        self.clientID = clientID
    }

    /// The Web Services body: `{apnsEnvironment, clientId?}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "tokens/create request", keys: ["apnsEnvironment", "clientId"])
        apnsEnvironment = try TokensCreateRequest.environment(o["apnsEnvironment"])
        clientID = try RequestBody.string(o["clientId"], "clientId")
    }

    static func environment(_ v: JSONValue?) throws -> String {
        let e = try RequestBody.string(v, "apnsEnvironment") ?? "development"
        guard e == "development" || e == "production" else { throw CloudKitError.badRequest("apnsEnvironment must be development or production, not '\(Names.describe(e))'") }
        return e
    }
}

public struct TokensRegisterRequest: Sendable {
    public var apnsEnvironment: String
    public var apnsToken: String

    public init(apnsEnvironment: String = "development", apnsToken: String) {
        self.apnsEnvironment = apnsEnvironment
        self.apnsToken = apnsToken
    }

    /// The Web Services body: `{apnsEnvironment, apnsToken}` (both required).
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "tokens/register request", keys: ["apnsEnvironment", "apnsToken", "clientId"])
        guard o["apnsEnvironment"] != nil else { throw CloudKitError.badRequest("tokens/register request needs 'apnsEnvironment'") }
        apnsEnvironment = try TokensCreateRequest.environment(o["apnsEnvironment"])
        guard let t = try RequestBody.string(o["apnsToken"], "apnsToken") else { throw CloudKitError.badRequest("tokens/register request needs 'apnsToken'") }
        apnsToken = t
    }
}

extension CloudKitAPI {
    func webClients(_ caller: Caller) -> WebClients {
        WebClients(paths: store.paths, container: caller.container, environment: caller.environment)
    }

    /// `{apnsEnvironment, apnsToken, webcourierURL}`.
    public func createPushToken(_ r: TokensCreateRequest, as caller: Caller) throws -> DocumentBody {
        let server = try requireServer(.tokensCreate)
        let ctx = try preflight(.tokensCreate, caller, need: .none)
        let token = Hex.string((0..<16).map { _ in UInt8.random(in: 0...255) })
        let user = ctx.principal.status == .available ? ctx.principal.user?.userRecordName : nil
        let client = WebClients.Client(apnsToken: token, apnsEnvironment: r.apnsEnvironment, userRecordName: user,
                                       deviceID: Self.pushDevice(caller, apnsToken: token), created: clock.now(), issuer: caller.credential)
        try webClients(caller).save(client)
        if user != nil { try registerInbox(client, caller) }
        return DocumentBody(["apnsEnvironment": .string(r.apnsEnvironment), "apnsToken": .string(token),
                             "webcourierURL": .string(server + "/webcourier/" + caller.container + "/" + caller.environment.rawValue + "/" + token)])
    }

    /// Binds a token to the signed-in caller (a browser where another user signed in is theirs
    /// from now on). An unknown token is NOT_FOUND.
    public func registerPushToken(_ r: TokensRegisterRequest, as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(.tokensRegister, caller, need: .none)
        let user = try ctx.principal.requireUser(for: "registering for notifications")
        guard var client = try webClients(caller).load(r.apnsToken) else {
            throw CloudKitError(.notFound, "no push token '\(Names.describe(r.apnsToken))' was made by tokens/create in this container and environment")
        }
        client.userRecordName = user.userRecordName
        client.apnsEnvironment = r.apnsEnvironment
        // The client that registers is the one that polls: its writes are skipped.
        client.deviceID = Self.pushDevice(caller, apnsToken: client.apnsToken)
        try webClients(caller).save(client)
        try registerInbox(client, caller)
        return DocumentBody([:])
    }

    /// The device a push token delivers to: the caller's, when it names one web client; else
    /// one of the token's own.
    static func pushDevice(_ caller: Caller, apnsToken: String) -> String {
        caller.deviceID == Caller.unnamedWebClient ? WebClients.Client.ownDevice(apnsToken) : caller.deviceID
    }

    private func registerInbox(_ client: WebClients.Client, _ caller: Caller) throws {
        var device = caller
        device.deviceID = client.deviceID
        _ = try listNotifications(NotificationsRequest(limit: 0), as: device)
        if let owner = client.userRecordName { try keepNewestWebInboxes(device, owner: owner) }
    }
}
