import CKModel
import CKStore

/// Who asks, and of which database: what every API entry takes beside its request. The CLI
/// makes one from its global options (`--container`, `--env`, `--db`, `--as`, `--device`);
/// `ck serve` from the request's path and its authentication. The preflight resolves it into
/// the account status and user a request acts as (`Principal`).
public struct Caller: Sendable {
    /// The user a request acts as, before it is resolved.
    public enum User: Sendable, Equatable {
        /// The device's signed-in account, whatever its status says.
        case device
        /// A user who signed in on this device (`--as APPLE-ID`); the device's status applies.
        case appleID(String)
        /// A user authenticated by other means (a web auth token of `ck serve`): their account
        /// is available, whatever the device says.
        case userRecordName(String)
        /// Nobody: a server-to-server key, or a web client without a session. Only what needs
        /// no account is allowed (reading the public database).
        case nobody
    }

    public var container: String
    public var environment: Environment
    public var scope: DatabaseScope
    public var user: User
    /// The device whose bookmarks and notification inbox are used, and that a write is
    /// recorded as coming from (`created.deviceID`, `modified.deviceID`).
    public var deviceID: String
    /// A web client of `ck serve`: its asset values need their upload's receipt, and may not
    /// name files of this machine (WebAssetRule).
    public var isWebClient = false
    /// The device of a web request that names no client (no `clientId`): shared by all of
    /// them, so it is no device to deliver notifications to.
    public static let unnamedWebClient = "web"
    /// For `.userRecordName`: the account an authentication found a moment ago (`ck serve`),
    /// which the preflight takes instead of reading the users again. Ignored unless it is that
    /// user's.
    public var account: UserAccount?
    /// For `.nobody` over HTTP: why the request's credential named no user, which a request
    /// that needs one is refused with (`ck serve` sets it from `authenticate`).
    public var nobodyReason: NobodyReason?
    /// The server-to-server key a request is signed with, acting as the user who registered it:
    /// that user stands on their own, as a developer's key does whatever a device reports.
    public var serverKeyID: String?
    /// For a web client of `ck serve`: what its request was authenticated with, named without
    /// the secret (`api-token:` and 16 hex digits of the token's SHA-256; a server-to-server key
    /// makes no push tokens). A push token it makes records it: the server caps long-polls by it.
    public var credential: String?

    public init(container: String, environment: Environment = .development, scope: DatabaseScope = .private,
                user: User = .device, deviceID: String = "default") {
        self.container = container
        self.environment = environment
        self.scope = scope
        self.user = user
        self.deviceID = deviceID
    }

    /// The same caller in another database of the container (`share accept` works in the
    /// shared database whatever `--db` says).
    public func inDatabase(_ scope: DatabaseScope) -> Caller {
        var c = self
        c.scope = scope
        return c
    }

    /// The Apple ID `--as` named, if any.
    var appleID: String? { if case .appleID(let a) = user { return a }; return nil }
}
