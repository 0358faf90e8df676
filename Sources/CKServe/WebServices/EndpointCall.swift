import CKCore
import CKJSON
import CKModel

/// Each Web Services endpoint as one API call: the JSON body read by the request type's own
/// `init(json:)` (strict: unknown keys and wrong types are BAD_REQUEST naming them), the entry
/// called as the caller, its body returned. Nothing here decides anything CloudKit decides.
enum EndpointCall {
    /// The answer of `endpoint` to `body` (`.null` for a GET).
    static func answer(_ endpoint: Endpoint, body: JSONValue, api: CloudKitAPI, caller: Caller) throws -> any ResponseBody {
        switch endpoint {
        case .recordsModify: return try api.modifyRecords(try ModifyRequest.parse(body), as: caller)
        case .recordsLookup: return try api.lookupRecords(try LookupRecordsRequest(json: body), as: caller)
        case .recordsQuery: return try api.queryRecords(try QueryRecordsRequest(json: body), as: caller)
        case .recordsResolve: return try api.resolveShares(try ResolveSharesRequest(json: body), as: caller)
        case .recordsAccept: return try api.acceptShares(try AcceptSharesRequest(json: body), as: caller)
        case .zonesModify: return try api.modifyZones(try ZonesModifyRequest(json: body), as: caller)
        case .zonesList: return try api.listZones(as: caller)
        case .zonesLookup: return try api.lookupZones(try ZonesLookupRequest(json: body), as: caller)
        case .changesZone: return try api.zoneChanges(try ZoneChangesRequest(json: body), as: caller)
        case .changesDatabase: return try api.databaseChanges(try DatabaseChangesRequest(json: body), as: caller)
        case .subscriptionsModify: return try api.modifySubscriptions(try SubscriptionsModifyRequest(json: body), as: caller)
        case .subscriptionsList: return try api.listSubscriptions(as: caller)
        case .subscriptionsLookup: return try api.lookupSubscriptions(try SubscriptionsLookupRequest(json: body), as: caller)
        case .usersCaller: return try api.callerIdentity(as: caller)
        case .usersCurrent: return try api.currentUser(as: caller)
        case .usersDiscover:
            // GET: every discoverable user; POST: the lookups asked for.
            return try api.discoverUsers(body.isNull ? UsersDiscoverRequest(lookups: nil) : try UsersDiscoverRequest(json: body), as: caller)
        case .usersLookupEmail: return try api.lookupUsersByEmail(try UsersLookupEmailRequest(json: body), as: caller)
        case .usersLookupID: return try api.lookupUsersByID(try UsersLookupIDRequest(json: body), as: caller)
        case .assetsUpload: return try api.assetUploadURLs(try AssetsUploadRequest(json: body), as: caller)
        case .assetsRereference: return try api.rereferenceAssets(try AssetsRereferenceRequest(json: body), as: caller)
        case .tokensCreate: return try api.createPushToken(try TokensCreateRequest(json: body), as: caller)
        case .tokensRegister: return try api.registerPushToken(try TokensRegisterRequest(json: body), as: caller)
        case .accountStatus, .notificationsList, .notificationsDeliver:
            throw CloudKitError(.notFound, "\(endpoint.path) is a native operation with no Web Services path")
        }
    }

    /// How the endpoint is sent: GET for the list endpoints (CloudKit JS), POST with a body for
    /// the rest. A list endpoint takes a POST too, its body ignored: iCloud.com's clients send
    /// `zones/list` as `POST {}` (Tests/Fixtures/wire/zones-list.request.photos), and Apple's
    /// servers answer it.
    static func allows(_ method: String, _ e: Endpoint) -> Bool {
        switch method {
        case "GET", "HEAD": return e.isGET
        case "POST": return true
        default: return false
        }
    }
}
