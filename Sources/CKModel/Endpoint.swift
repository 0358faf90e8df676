/// Every client operation ck answers, named once: the Web Services endpoints by Apple's paths,
/// and the native operations ck reproduces that have none. The command table (which endpoint
/// a command stands for), `ck fault add --op` (which operations a fault can fail) and the HTTP
/// router of `ck serve` all read this list. ck's own operations (history, faults, fsck, schema,
/// accounts, import and export) are API entries too, but no client sends them: they are not
/// endpoints.
public enum Endpoint: String, CaseIterable, Sendable {
    // …/database/1/<container>/<environment>/<database>/<path> (reference §3)
    case recordsModify = "records/modify"
    case recordsLookup = "records/lookup"
    case recordsQuery = "records/query"
    case recordsResolve = "records/resolve"
    case recordsAccept = "records/accept"
    case zonesModify = "zones/modify"
    case zonesList = "zones/list"
    case zonesLookup = "zones/lookup"
    case changesZone = "changes/zone"
    case changesDatabase = "changes/database"
    case subscriptionsModify = "subscriptions/modify"
    case subscriptionsList = "subscriptions/list"
    case subscriptionsLookup = "subscriptions/lookup"
    case usersCaller = "users/caller"
    case usersCurrent = "users/current"
    case usersDiscover = "users/discover"
    case usersLookupEmail = "users/lookup/email"
    case usersLookupID = "users/lookup/id"
    case assetsUpload = "assets/upload"
    case assetsRereference = "assets/rereference"
    // …/device/1/<container>/<environment>/tokens/<create|register>
    case tokensCreate = "tokens/create"
    case tokensRegister = "tokens/register"
    // Native operations without a Web Services path.
    /// `CKContainer.accountStatus`.
    case accountStatus = "account/status"
    /// The notifications a device has received (what pushes deliver).
    case notificationsList = "notifications/list"
    /// A push reaching a device: a fault here drops the notification instead of failing.
    case notificationsDeliver = "notifications/deliver"

    public var path: String { rawValue }

    /// Where a Web Services client addresses the endpoint.
    public enum Module: Sendable {
        /// `/database/1/<container>/<environment>/<database>/<path>`
        case database
        /// `/device/1/<container>/<environment>/<path>`
        case device
        /// No Web Services path: a native operation.
        case native
    }

    public var module: Module {
        switch self {
        case .tokensCreate, .tokensRegister: return .device
        case .accountStatus, .notificationsList, .notificationsDeliver: return .native
        default: return .database
        }
    }

    /// Whether CloudKit JS sends it as a GET (it has no body); the others are POSTs with a
    /// JSON body (cloudkit-js.md §2). `users/discover` is both: GET lists every discoverable
    /// user, POST looks some up.
    public var isGET: Bool {
        switch self {
        case .zonesList, .subscriptionsList, .usersCaller, .usersCurrent, .usersDiscover: return true
        default: return false
        }
    }

    /// The endpoints whose requests name records one by one, so a fault can fail one record of
    /// the batch (`ck fault add --record`).
    public var namesRecords: Bool { self == .recordsModify || self == .recordsLookup }

    /// An endpoint by its path; nil for anything else.
    public init?(path: String) { self.init(rawValue: path) }
}
