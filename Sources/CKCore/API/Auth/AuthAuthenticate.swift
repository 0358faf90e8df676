import CKCrypto
import CKModel
import CKStore
import Foundation

/// What an HTTP request carries to say who sends it (reference §2, cloudkit-js.md §3): an API
/// token and maybe a user's web auth token, or a server-to-server signature.
public struct WebCredentials: Sendable {
    public var container: String
    public var environment: Environment
    /// The database of the path; nil for the `device/1` paths (`tokens/*`).
    public var scope: DatabaseScope?
    /// `?ckAPIToken=`.
    public var apiToken: String?
    /// `?ckWebAuthToken=`, already percent-decoded.
    public var webAuthToken: String?
    /// The three `X-Apple-CloudKit-Request-*` headers, when the request is signed.
    public var signature: ServerSignature?
    /// The endpoint of the path, when known: a server-to-server key reaches only `users/caller`
    /// of the `users/*` endpoints.
    public var endpoint: Endpoint?

    public init(container: String, environment: Environment, scope: DatabaseScope?, apiToken: String? = nil,
                webAuthToken: String? = nil, signature: ServerSignature? = nil, endpoint: Endpoint? = nil) {
        self.container = container
        self.environment = environment
        self.scope = scope
        self.apiToken = apiToken
        self.webAuthToken = webAuthToken
        self.signature = signature
        self.endpoint = endpoint
    }
}

/// A server-to-server signature: `X-Apple-CloudKit-Request-KeyID`, `-ISO8601Date` and
/// `-SignatureV1` (base64 DER ECDSA-SHA256 over `date:base64(sha256(body)):target`), with the
/// body and the request target it signs.
public struct ServerSignature: Sendable {
    public var keyID: String
    public var iso8601Date: String
    public var signatureV1: String
    public var body: [UInt8]
    /// The path and query exactly as received (`/database/1/…/records/query?ckjsVersion=…`).
    public var target: String

    public init(keyID: String, iso8601Date: String, signatureV1: String, body: [UInt8], target: String) {
        self.keyID = keyID
        self.iso8601Date = iso8601Date
        self.signatureV1 = signatureV1
        self.body = body
        self.target = target
    }
}

/// Who an authenticated request acts as.
public struct WebAuthentication: Sendable, Equatable {
    /// `.userRecordName` for a valid web session, or a server-to-server key's user; `.nobody`
    /// otherwise.
    public var user: Caller.User
    /// The key that signed the request, when one did.
    public var serverKeyID: String?
    /// For `tokens/create`: what the request authenticated with, named without the secret
    /// (`Caller.credential`), which the push token it makes records.
    public var credential: String?
    /// For `.nobody`: why the request's credential names no user (a missing, malformed,
    /// unknown, expired or replaced web auth token; a key without a user).
    public var nobodyReason: NobodyReason?
    /// The web auth token of the session the request acts in, when it is a live one: once the
    /// request has succeeded, `rotateWebAuthToken` may replace it.
    public var webAuthToken: String?
    /// The account the session's user record name was found as (for `Caller.account`).
    public var account: UserAccount?
    /// When the session was made, and whether it was replaced already: `rotateWebAuthToken`
    /// reads it again only when a replacement is due.
    var sessionCreated: Int64?
    var sessionRotated = false

    public init(user: Caller.User, serverKeyID: String? = nil, webAuthToken: String? = nil, nobodyReason: NobodyReason? = nil) {
        self.user = user
        self.serverKeyID = serverKeyID
        self.webAuthToken = webAuthToken
        self.nobodyReason = nobodyReason
    }

    /// The caller a request so authenticated acts as, in a database of its container (`scope`
    /// nil: a `device/1` path), from a device: with what authentication found (the account, or
    /// why there is none), so the preflight neither reads the users again nor blames the
    /// device's account for a bad token.
    public func caller(container: String, environment: Environment, scope: DatabaseScope?, deviceID: String) -> Caller {
        var c = Caller(container: container, environment: environment, scope: scope ?? .private, user: user, deviceID: deviceID)
        c.isWebClient = true
        c.account = account
        c.nobodyReason = nobodyReason
        c.serverKeyID = serverKeyID
        c.credential = credential
        return c
    }
}

extension CloudKitAPI {
    /// How far a signed request's date may be from this API's clock.
    public static let signatureClockSkew: Int64 = 5 * 60 * 1000

    /// The one authentication step of every HTTP request. A request needs an API token of its
    /// container environment, or a valid signature: otherwise AUTHENTICATION_FAILED (401) saying
    /// what is missing or wrong, never echoing a secret. A signed request acts as the user who
    /// registered its key, and only in the public database (ACCESS_DENIED, 403, elsewhere — push
    /// tokens included — and for the `users/*` endpoints but `users/caller`). A web auth token
    /// that names no live session of this container environment is no error: the caller is
    /// nobody, with the reason (`nobodyReason`) a user-bound call then gets
    /// AUTHENTICATION_REQUIRED with. What `checked` (`authenticateBeforeBody` of the same
    /// credentials) passed is not checked again: the signature alone is left to verify.
    public func authenticate(_ c: WebCredentials, checked: HeadAuthentication? = nil) throws -> WebAuthentication {
        let head = checked.flatMap { $0.covers(c) ? $0 : nil }
        if head == nil { try Names.validateContainerID(c.container) }
        var auth: WebAuthentication
        if let sig = c.signature {
            let key: ServerKeyStore.Key
            if let checkedKey = head?.key {
                try verifySignature(sig, with: checkedKey)
                key = checkedKey
            } else {
                key = try signedRequestKey(sig, c, headOnly: false)
            }
            auth = try keyAuthentication(key)
        } else {
            if head == nil { try requireAPIToken(c) }
            auth = try webSession(c)
            // `api-token:` and 16 hex digits of its SHA-256: the long-polls of the push tokens
            // one API token made are capped together.
            if c.endpoint == .tokensCreate, let token = c.apiToken { auth.credential = "api-token:" + SHA256.hex(token.utf8).prefix(16) }
        }
        return auth
    }

    /// A signed request's key, checked (`verify`; `headOnly`: all but the signature itself) and
    /// allowed where the request goes: the public database, and of the `users/*` endpoints
    /// `users/caller` only.
    func signedRequestKey(_ sig: ServerSignature, _ c: WebCredentials, headOnly: Bool) throws -> ServerKeyStore.Key {
        let key = try verify(sig, c, headOnly: headOnly)
        guard let scope = c.scope else {
            // A push token is one of a user's devices: made or registered under a key, its
            // long-poll would hand the key's holder that user's private notifications.
            throw CloudKitError(.accessDenied, "a server-to-server key reaches only the public database, not push tokens (tokens/create, tokens/register): a push token is a device of its user, and would receive that user's private notifications")
        }
        if scope != .public {
            throw CloudKitError(.accessDenied, "a server-to-server key reaches only the public database, not the \(scope.rawValue) one")
        }
        if let e = c.endpoint, e.path.hasPrefix("users/"), e != .usersCaller {
            throw CloudKitError(.accessDenied, "a server-to-server key may not use \(e.path): of the users endpoints it reaches only users/caller (the identity of the user who registered the key); the others need a user's web auth token")
        }
        return key
    }

    /// An API token of the request's container environment, or AUTHENTICATION_FAILED saying
    /// what is missing or wrong.
    func requireAPIToken(_ c: WebCredentials) throws {
        guard let token = c.apiToken, !token.isEmpty else {
            throw CloudKitError(.authenticationFailed, "the request carries no ckAPIToken and no server-to-server signature (X-Apple-CloudKit-Request-KeyID, -ISO8601Date, -SignatureV1); make a token with 'ck api-token create'")
        }
        guard try APITokenStore(paths: store.paths, container: c.container, environment: c.environment).contains(token) else {
            throw CloudKitError(.authenticationFailed, unknownAPIToken(token, c))
        }
    }

    /// Who a request with a valid API token acts as: the user of its web auth token's session,
    /// or nobody, with what is wrong with the token.
    private func webSession(_ c: WebCredentials) throws -> WebAuthentication {
        func nobody(_ why: String) -> WebAuthentication {
            WebAuthentication(user: .nobody, nobodyReason: NobodyReason(.authenticationRequired, why))
        }
        let signIn = "sign in at the redirectURL, or make a token with 'ck account web-auth-token'"
        guard let web = c.webAuthToken else { return nobody("the request carries no ckWebAuthToken; \(signIn)") }
        let session: WebSessionStore.Session
        switch webSessions().lookup(web) {
        case .live(let s): session = s
        case .malformed: return nobody(WebSessionStore.shapeProblem(web) ?? "ckWebAuthToken is not a token")
        case .unknown:
            return nobody("ckWebAuthToken names no session of this data directory (its user signed out, the session was ended, or it was never made here); \(signIn)")
        case .expired(let s):
            return nobody("ckWebAuthToken expired at \(Timestamps.iso(s.expires)) (\(s.keepSignedIn ? "14 days" : "30 minutes") after it was made); \(signIn)")
        case .replaced(let s):
            return nobody("ckWebAuthToken was replaced at \(Timestamps.iso(s.rotated ?? s.created)) by the X-Apple-CloudKit-Web-Auth-Token of that answer, and this server takes a replaced token for 2 minutes only (--strict-token-rotation); send the newest token")
        }
        guard session.container == c.container, session.environment == c.environment else {
            return nobody("ckWebAuthToken is a session of \(session.container) (\(session.environment.rawValue)), not of \(c.container) (\(c.environment.rawValue)); sign in to this one")
        }
        guard let account = try store.accounts.user(recordName: session.userRecordName) else {
            return nobody("ckWebAuthToken's user is not known to this data directory any more; \(signIn)")
        }
        var auth = WebAuthentication(user: .userRecordName(session.userRecordName), webAuthToken: web)
        auth.account = account
        auth.sessionCreated = session.created
        auth.sessionRotated = session.rotated != nil
        return auth
    }

    /// Who a request signed with `key` acts as: the user who registered it. A key registered by
    /// an older ck has none: it acts as nobody (reading the public database as `_world` does),
    /// and what needs a user is refused saying how to register it again.
    private func keyAuthentication(_ key: ServerKeyStore.Key) throws -> WebAuthentication {
        let again = "register it again as the user it acts for: 'ck server-key delete \(key.keyID)', then 'ck server-key add \(key.keyID) --public-key FILE' (as the device's account, or with --as APPLE-ID)"
        guard let owner = key.userRecordName else {
            return WebAuthentication(user: .nobody, serverKeyID: key.keyID, nobodyReason: NobodyReason(.accessDenied,
                "server-to-server key '\(key.keyID)' has no user: an older ck registered it without one, and a key acts as the user who registered it; \(again)"))
        }
        guard let account = try store.accounts.user(recordName: owner) else {
            return WebAuthentication(user: .nobody, serverKeyID: key.keyID, nobodyReason: NobodyReason(.accessDenied,
                "server-to-server key '\(key.keyID)' was registered by user \(owner), whom this data directory does not know; \(again)"))
        }
        var auth = WebAuthentication(user: .userRecordName(owner), serverKeyID: key.keyID)
        auth.account = account
        return auth
    }

    /// The token that replaces a request's web auth token, for the
    /// `X-Apple-CloudKit-Web-Auth-Token` header of its answer, when one is due (the token is
    /// over a minute old and not yet replaced); nil otherwise. Asked only once the request has
    /// succeeded: CloudKit JS takes a new token from a 2xx answer only, so a token replaced in
    /// an error's answer would be lost to the client, and its session with it.
    public func rotateWebAuthToken(_ auth: WebAuthentication) throws -> String? {
        guard let web = auth.webAuthToken else { return nil }
        // Not due by what authentication read (the common case): nothing to read again.
        if let created = auth.sessionCreated, !WebSessionStore.rotationDue(created: created, rotated: auth.sessionRotated, now: clock.now()) { return nil }
        return try webSessions().rotate(web)
    }

    /// Why an API token is refused: not shaped as one (its length, against the 64 it needs, and
    /// whitespace at its ends, named), or not one of this container environment (saying so
    /// when it is one of the container's other environment, the commonest slip).
    private func unknownAPIToken(_ token: String, _ c: WebCredentials) -> String {
        let shown = APITokenStore.shown(token)
        guard APITokenStore.isToken(token) else { return "ckAPIToken '\(shown)' \(APITokenStore.shapeProblem(token))" }
        let here = "\(c.container) (\(c.environment.rawValue))"
        let other: Environment = c.environment == .development ? .production : .development
        if (try? APITokenStore(paths: store.paths, container: c.container, environment: other).contains(token)) == true {
            return "ckAPIToken '\(shown)' is a token of the \(other.rawValue) environment, not of \(here)"
        }
        let make = "ck --container \(c.container)\(c.environment == .production ? " --env production" : "") api-token create"
        // A token of another container (the default container's, sent by a page configured with
        // the app's own): which one, found among the data directory's containers.
        if let (owner, env) = containerHolding(token) {
            return "ckAPIToken '\(shown)' is a token of \(owner) (\(env.rawValue)), not of \(c.container); make one for it: \(make)"
        }
        return "ckAPIToken '\(shown)' is not an API token of \(here) (revoked, or never made in this data directory); make one: \(make)"
    }

    /// The container and environment whose API tokens include `token`, if any does.
    private func containerHolding(_ token: String) -> (String, Environment)? {
        let root = store.paths.root + "/containers"
        for dir in ((try? FileSystem.list(root)) ?? []).sorted() {
            guard let id = PathEncoding.decodeSimple(dir) else { continue }
            for env in Environment.allCases where (try? APITokenStore(paths: store.paths, container: id, environment: env).contains(token)) == true {
                return (id, env)
            }
        }
        return nil
    }

    /// Checks a server-to-server signature: a key of this container environment, a date within
    /// `signatureClockSkew` of now, and an ECDSA-SHA256 signature over
    /// `date:base64(sha256(body)):target`. The key. `headOnly`: all but the signature itself,
    /// which covers the body (checked before the body is read; verified again once it is).
    @discardableResult
    func verify(_ sig: ServerSignature, _ c: WebCredentials, headOnly: Bool = false) throws -> ServerKeyStore.Key {
        func refuse(_ why: String) -> CloudKitError { CloudKitError(.authenticationFailed, why) }
        let here = "\(c.container) (\(c.environment.rawValue))"
        guard (try? ServerKeyStore.validateKeyID(sig.keyID)) != nil,
              let key = try ServerKeyStore(paths: store.paths, container: c.container, environment: c.environment).key(sig.keyID) else {
            throw refuse("X-Apple-CloudKit-Request-KeyID '\(Names.describe(sig.keyID))' names no server-to-server key of \(here); register it with 'ck server-key add'")
        }
        guard let date = Self.signatureDate(sig.iso8601Date) else {
            throw refuse("X-Apple-CloudKit-Request-ISO8601Date '\(Names.describe(sig.iso8601Date))' is not an ISO 8601 UTC date-time such as 2026-11-25T13:03:49Z")
        }
        let skew = date - clock.now()
        guard abs(skew) <= Self.signatureClockSkew else {
            throw refuse("X-Apple-CloudKit-Request-ISO8601Date \(sig.iso8601Date) is \(abs(skew) / 1000) s \(skew < 0 ? "behind" : "ahead of") the server's clock; a signed request must be dated within 5 minutes")
        }
        if headOnly { return key }  // the signature covers the body: checked once it is read
        try verifySignature(sig, with: key)
        return key
    }

    /// The ECDSA-SHA256 signature of a signed request, over `date:base64(sha256(body)):target`,
    /// verified with its key.
    func verifySignature(_ sig: ServerSignature, with key: ServerKeyStore.Key) throws {
        func refuse(_ why: String) -> CloudKitError { CloudKitError(.authenticationFailed, why) }
        let signature = sig.signatureV1.utf8.count <= 4096 ? Data(base64Encoded: sig.signatureV1) : nil
        guard let der = signature else { throw refuse("X-Apple-CloudKit-Request-SignatureV1 is not base64") }
        let message = sig.iso8601Date + ":" + Data(SHA256.digest(sig.body)).base64EncodedString() + ":" + sig.target
        guard key.publicKey.isValidSignature([UInt8](der), for: Array(message.utf8)) else {
            throw refuse("X-Apple-CloudKit-Request-SignatureV1 does not verify with key '\(sig.keyID)' over date:base64(sha256(body)):path?query (the path and query exactly as sent, the body byte for byte)")
        }
    }

    /// A signature's date: `2026-11-25T13:03:49Z` (fractions of a second and a numeric offset
    /// are taken too); nil without a time or an offset.
    static func signatureDate(_ s: String) -> Int64? {
        let u = Array(s.utf8)
        guard u.count >= 20, u.count <= 40, u[10] == UInt8(ascii: "T"),
              u.last == UInt8(ascii: "Z") || u[19...].contains(UInt8(ascii: "+")) || u[19...].contains(UInt8(ascii: "-")) else { return nil }
        return Timestamps.parseISO8601(s)
    }
}
