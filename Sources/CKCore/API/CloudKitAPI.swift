import CKModel
import CKStore

/// CloudKit Web Services over one data directory: the API both front ends speak. Each entry
/// takes a typed request and a `Caller` and returns the body the endpoint returns (or throws
/// the request-level `CloudKitError`). Every entry starts with the one preflight
/// (`preflight`: faults, account status, who the caller is) and every record it answers with
/// passes the one permission gate (`PermissionGate`). The CLI turns argv into requests and
/// prints the bodies; `ck serve` does the same with HTTP. Neither reaches past this type into
/// the store (Docs/architecture.md).
public final class CloudKitAPI {
    let store: CloudKitStore
    /// Where the bytes of a stored asset are read from, as a response's `downloadURL` gives
    /// it: `file://` into the data directory (the CLI), or `ck serve`'s own URL.
    let assetBaseURL: String
    /// Where `ck serve` answers (`http://127.0.0.1:8484`): the origin of the URLs the API hands
    /// out for a client to come back to — asset upload URLs, web push long-poll URLs — and of
    /// asset download URLs. nil for the CLI, which serves no URL.
    public let serverURL: String?
    /// What becomes of a web auth token once a newer one replaced it (`ck serve
    /// --strict-token-rotation`).
    public let webTokenRotation: WebTokenRotation
    /// The data directory's secret, read once when an answer first signs an asset URL.
    let assetURLSecret: SecretCache

    public init(dataDirectory: String, clock: Clock = .system, serverURL: String? = nil, webTokenRotation: WebTokenRotation = .live) {
        // A server's writes publish their files after the answer; a command's, before it returns.
        store = CloudKitStore(root: dataDirectory, clock: clock, publishesAfterAnswer: serverURL != nil)
        self.serverURL = serverURL
        self.webTokenRotation = webTokenRotation
        self.assetBaseURL = serverURL.map { $0 + "/assets/" } ?? store.assets.baseURL
        self.assetURLSecret = SecretCache(paths: store.paths)
    }

    /// The server's origin, for an endpoint whose answer is a URL to come back to.
    func requireServer(_ endpoint: Endpoint) throws -> String {
        guard let s = serverURL else {
            throw CloudKitError.badRequest("\(endpoint.path) answers with URLs a client comes back to over HTTP; this request did not come over HTTP")
        }
        return s
    }

    /// The data directory, its links resolved.
    public var dataDirectory: String { store.paths.root }

    var clock: Clock { store.clock }

    /// Waits until every commit this process answered has its files published (a server
    /// stopping).
    public func finishPublishing() { store.finishPublishing() }
}

/// What the preflight made of a request: who it acts as, the database it reads and writes,
/// the gate every record of its answer passes, and how the answer shows records.
struct RequestContext {
    let caller: Caller
    let db: Database
    let gate: PermissionGate
    let style: ResponseStyle
    /// What the store's writes and lookups follow for this request: its per-record faults,
    /// a web client's asset rule.
    let options: RequestOptions
    var principal: Principal { db.caller }
    /// Who reads the answer (`ResponseStyle.audience`).
    var audience: ResponseStyle.Audience { style.audience }
}

/// What a request needs of the caller's account (SPEC §3): reading the public database needs
/// none; reading the private or shared database, and writing anywhere, need an available one.
enum AccountNeed {
    case none, read, write
}

extension CloudKitAPI {
    /// The one preflight every request passes before it reads or writes anything:
    /// 1. a fault armed for its endpoint (`ck fault add`) fails it, as the service would, for
    ///    the zones it names, the user it acts as and its device;
    /// 2. the caller is resolved into who acts, with what account status (AUTHENTICATION_REQUIRED
    ///    for `--as` a user who never signed in on this device);
    /// 3. the database is opened (a schema reset a crash interrupted is finished first), with
    ///    the per-record faults of the endpoint;
    /// 4. the account status allows what the request needs of it (`need`).
    func preflight(_ endpoint: Endpoint?, _ caller: Caller, zones: [String] = [], need: AccountNeed = .read) throws -> RequestContext {
        try Names.validateContainerID(caller.container)
        var recordScoped = false
        if let op = endpoint {
            recordScoped = try FaultStore(paths: store.paths).check(op: op, zones: zones, user: { self.faultUser(caller) }, device: caller.deviceID)
        }
        let db = try store.database(DatabaseAddress(container: caller.container, environment: caller.environment, scope: caller.scope),
                                    principal: try principal(caller))
        var options = RequestOptions()
        if let op = endpoint, op.namesRecords, recordScoped { options.faults = try recordFaults(op, caller.appleID, db) }
        if caller.isWebClient { options.webAssets = WebAssetRule(container: caller.container, paths: store.paths) }
        switch need {
        case .none: break
        case .read: try db.requireRead()
        case .write: try db.requireWrite()
        }
        return RequestContext(caller: caller, db: db, gate: PermissionGate(db: db), style: responseStyle(caller.scope, reader: db.caller.user?.userRecordName),
                              options: options)
    }

    /// Who a caller acts as: the account status the device reports and the user.
    func principal(_ caller: Caller) throws -> Principal {
        var p = try principal(caller.user, deviceID: caller.deviceID, account: caller.account, ownStanding: caller.serverKeyID != nil)
        if p.user == nil { p.nobodyReason = caller.nobodyReason }
        return p
    }

    /// `ownStanding`: the user's account is available whatever the device reports (a
    /// server-to-server key's user).
    func principal(_ user: Caller.User, deviceID: String, account: UserAccount? = nil, ownStanding: Bool = false) throws -> Principal {
        switch user {
        case .device: return try store.accounts.caller(actingAs: nil, deviceID: deviceID)
        case .appleID(let a): return try store.accounts.caller(actingAs: a, deviceID: deviceID)
        case .userRecordName(let n):
            let found = account?.userRecordName == n ? account : try store.accounts.user(recordName: n)
            guard let u = found else {
                throw CloudKitError(.authenticationFailed, "no iCloud user '\(Names.describe(n))' is known to this data directory")
            }
            // A web session of the device's own account is that account: its status (restricted,
            // temporarily unavailable) binds HTTP callers as it binds the CLI. Another user's
            // session, and a server-to-server key's user, stand on their own.
            if ownStanding { return Principal(status: .available, user: u, deviceID: deviceID) }
            let d = try store.accounts.device()
            let status = d.appleID?.lowercased() == u.appleID.lowercased() ? d.status : .available
            return Principal(status: status, user: u, deviceID: deviceID)
        case .nobody: return Principal(status: .noAccount, user: nil, deviceID: deviceID)
        }
    }

    /// How responses show records to this caller: asset URLs where the bytes are served (over
    /// HTTP, signed for `reader`, the user record name the answer is for); the keys of
    /// encrypted assets in the private and shared databases.
    public func responseStyle(_ scope: DatabaseScope, reader: String? = nil) -> ResponseStyle {
        ResponseStyle(assetBase: assetBaseURL, encryptedAssets: scope != .public, assetURLs: assetURLSigner(reader: reader), audience: audience)
    }

    /// Who reads this API's answers: the wire when it serves HTTP (it has a server URL), else
    /// the command line.
    public var audience: ResponseStyle.Audience { serverURL == nil ? .commandLine : .wire }

    /// Who a fault's user scope is matched against: the user record name when the caller
    /// resolves to a user, else the Apple ID they act as (`--as`).
    func faultUser(_ caller: Caller) -> String? { faultUser(caller.user, deviceID: caller.deviceID) }

    func faultUser(_ user: Caller.User, deviceID: String) -> String? {
        (try? principal(user, deviceID: deviceID))?.user?.userRecordName ?? Self.appleID(user)
    }

    /// The Apple ID a user is named by (`--as`), if that is how.
    static func appleID(_ user: Caller.User) -> String? {
        if case .appleID(let a) = user { return a }
        return nil
    }

    /// The per-record faults of an endpoint that names records one by one, when some fault is
    /// scoped to a record; only the endpoint's own records are faulted, not the lookups a save
    /// makes on the side.
    func recordFaults(_ op: Endpoint, _ appleID: String?, _ db: Database) throws -> RecordFaults? {
        let faults = FaultStore(paths: store.paths)
        guard try faults.hasRecordFaults() else { return nil }
        let user = db.caller.user?.userRecordName ?? appleID
        let device = db.caller.deviceID
        return RecordFaults { o, zone, name in o == op ? try faults.recordFault(op: o, zone: zone, record: name, user: user, device: device) : nil }
    }
}
