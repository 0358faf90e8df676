import CKJSON
import CKModel
import CKStore

/// A subscription dictionary as Web Services takes it (reference §3.5), and as CloudKit JS sends
/// it, untouched from the app: `{subscriptionID?, subscriptionType: query|zone|database, zoneID?,
/// zoneWide?, firesOn?, firesOnce?, query?: {recordType, filterBy?, sortBy?}, notificationInfo?}`,
/// plus ck's `recordType` (a zone subscription's type filter). A dictionary ck printed is taken
/// back as it is.
extension Subscription {
    static let keys: Set<String> = ["subscriptionID", "subscriptionType", "zoneID", "zoneWide", "firesOn", "firesOnce", "query",
                                    "notificationInfo", "recordType"]
    /// Notification Info keys and the type of their values: Web Services' (reference §1.6),
    /// CloudKit JS's `additionalFields` (the native `desiredKeys`, which is taken as its other
    /// name) and `category`, and the native `CKSubscription.NotificationInfo` properties Web
    /// Services' reference predates, by their native names (`title`, `subtitle` and their
    /// localizations, `shouldSendMutableContent`, `collapseIDKey`). "fields": field names.
    public static let notificationInfoKeys: [String: String] = [
        "alertBody": "string", "alertLocalizationKey": "string", "alertLocalizationArgs": "fields",
        "alertActionLocalizationKey": "string", "alertLaunchImage": "string", "soundName": "string", "shouldBadge": "bool",
        "shouldSendContentAvailable": "bool", "additionalFields": "fields", "category": "string",
        "title": "string", "titleLocalizationKey": "string", "titleLocalizationArgs": "fields",
        "subtitle": "string", "subtitleLocalizationKey": "string", "subtitleLocalizationArgs": "fields",
        "shouldSendMutableContent": "bool", "collapseIDKey": "string", "desiredKeys": "fields",
    ]

    /// Reads a Notification Info dictionary into the keys ck keeps (`desiredKeys` as
    /// `additionalFields`); null values are left out.
    public static func parseNotificationInfo(_ n: JSONValue, _ what: String) throws -> [String: JSONValue] {
        let info = try RequestBody.object(n, what, keys: Set(Subscription.notificationInfoKeys.keys))
        var out: [String: JSONValue] = [:]
        for (k, v) in info where !v.isNull {
            switch Subscription.notificationInfoKeys[k]! {
            case "string":
                guard v.stringValue != nil else { throw CloudKitError.badRequest("\(what).\(k) has a value of the wrong type (\(v.kindName)); expected a string") }
            case "bool":
                guard v.boolValue != nil else { throw CloudKitError.badRequest("\(what).\(k) has a value of the wrong type (\(v.kindName)); expected true or false") }
            default:
                guard let list = v.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                    throw CloudKitError.badRequest("\(what).\(k) has a value of the wrong type (\(v.kindName)); expected an array of field names")
                }
                for f in list {
                    do { try Names.validateFieldName(f.stringValue!) } catch let e as CloudKitError {
                        throw CloudKitError.badRequest("\(what).\(k): \(e.reason)")
                    }
                }
            }
            // false is every flag's default: kept as an absent key, so equal info compares equal.
            if v.boolValue == false { continue }
            let key = k == "desiredKeys" ? "additionalFields" : k
            if out[key] != nil { throw CloudKitError.badRequest("\(what) gives both desiredKeys and additionalFields, two names of one key") }
            out[key] = v
        }
        return out
    }

    /// Reads a subscription dictionary; `what` names it in errors (`operations[0].subscription`).
    /// An ID left out is given by the API: the subscription's default ID (`subscriptionID` "").
    public init(json j: JSONValue, _ what: String = "subscription") throws {
        let o = try RequestBody.object(j, what, keys: Subscription.keys)
        let given = try RequestBody.string(o["subscriptionID"], "\(what).subscriptionID")
        if let g = given { try Subscription.validateID(g) }
        let id = given ?? ""
        guard let t = o["subscriptionType"], let ts = t.stringValue, let kind = Kind(rawValue: ts) else {
            throw CloudKitError.badRequest("\(what).subscriptionType must be query, zone or database")
        }
        var zoneName = try o["zoneID"].flatMap { $0.isNull ? nil : try RequestBody.zoneID($0, "\(what).zoneID").zoneName }
        let zoneWide = try RequestBody.bool(o["zoneWide"], "\(what).zoneWide")
        var recordType: String?
        var filters: [QueryFilter] = []
        var firesOn = FiresOn.allCases
        if let q = o["query"], !q.isNull {
            guard kind == .query else { throw CloudKitError.badRequest("\(what).query applies only to query subscriptions") }
            let qo = try RequestBody.object(q, "\(what).query", keys: ["recordType", "filterBy", "sortBy"])
            guard let rt = qo["recordType"]?.stringValue else { throw CloudKitError.badRequest("\(what).query needs a 'recordType' string") }
            recordType = rt
            if let f = qo["filterBy"], !f.isNull {
                guard let list = f.arrayValue else { throw CloudKitError.badRequest("\(what).query.filterBy must be an array") }
                filters = try list.map(QueryRequest.parseFilter)
            }
            // A subscription has no order: sortBy is read (so a malformed one is refused) and left.
            if let s = qo["sortBy"], !s.isNull {
                guard let list = s.arrayValue else { throw CloudKitError.badRequest("\(what).query.sortBy must be an array") }
                _ = try list.map(QueryRequest.parseSort)
            }
        } else if kind == .query {
            throw CloudKitError.badRequest("\(what): a query subscription needs a 'query' with its recordType")
        }
        if let rt = o["recordType"], !rt.isNull {
            guard kind == .zone else { throw CloudKitError.badRequest("\(what).recordType applies to zone subscriptions (a query subscription names its type in query)") }
            guard let s = rt.stringValue else { throw CloudKitError.badRequest("\(what).recordType must be a string") }
            recordType = s
        }
        if let f = o["firesOn"], !f.isNull {
            guard kind == .query else { throw CloudKitError.badRequest("\(what).firesOn applies only to query subscriptions") }
            guard let list = f.arrayValue else { throw CloudKitError.badRequest("\(what).firesOn must be an array of create, update, delete") }
            firesOn = try list.map { v in
                guard let s = v.stringValue, let e = FiresOn(rawValue: s) else { throw CloudKitError.badRequest("\(what).firesOn must hold create, update or delete") }
                return e
            }
        }
        let firesOnce = try RequestBody.bool(o["firesOnce"], "\(what).firesOnce") ?? false
        // A query subscription without a zone watches every zone, unless zoneWide is false:
        // then the default zone (Web Services' zoneWide defaults to true).
        if kind == .query, zoneName == nil, zoneWide == false { zoneName = ZoneID.defaultZoneName }
        let info = try o["notificationInfo"].flatMap { $0.isNull ? nil : try Subscription.parseNotificationInfo($0, "\(what).notificationInfo") } ?? [:]
        self.init(subscriptionID: id, kind: kind, zoneName: zoneName, recordType: recordType, filters: filters, firesOn: firesOn,
                  firesOnce: firesOnce)
        notificationInfo = info
    }
}
