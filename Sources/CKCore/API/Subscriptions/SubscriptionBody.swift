/// A subscription dictionary as Web Services takes it (reference §3.5), and as CloudKit JS sends
/// it, untouched from the app: `{subscriptionID?, subscriptionType: query|zone|database, zoneID?,
/// zoneWide?, firesOn?, firesOnce?, query?: {recordType, filterBy?, sortBy?}, notificationInfo?}`,
/// plus ck's `recordType` (a zone subscription's type filter). A dictionary ck printed is taken
/// back as it is.
extension Subscription {
    static let keys: Set<String> = ["subscriptionID", "subscriptionType", "zoneID", "zoneWide", "firesOn", "firesOnce", "query",
                                    "notificationInfo", "recordType"]
    /// Notification Info keys (reference §1.6; CloudKit JS adds `additionalFields` and `category`)
    /// and the type of their values.
    static let notificationInfoKeys: [String: String] = [
        "alertBody": "string", "alertLocalizationKey": "string", "alertLocalizationArgs": "strings",
        "alertActionLocalizationKey": "string", "alertLaunchImage": "string", "soundName": "string", "shouldBadge": "bool",
        "shouldSendContentAvailable": "bool", "additionalFields": "strings", "category": "string",
    ]

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
        var alertBody: String?
        var contentAvailable = false
        var other: [String: JSONValue] = [:]
        if let n = o["notificationInfo"], !n.isNull {
            let info = try RequestBody.object(n, "\(what).notificationInfo", keys: Set(Subscription.notificationInfoKeys.keys))
            for (k, v) in info where !v.isNull {
                let ok: Bool
                switch Subscription.notificationInfoKeys[k]! {
                case "string": ok = v.stringValue != nil
                case "bool": ok = v.boolValue != nil
                default: ok = v.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false
                }
                guard ok else { throw CloudKitError.badRequest("\(what).notificationInfo.\(k) has a value of the wrong type (\(v.kindName))") }
                switch k {
                case "alertBody": alertBody = v.stringValue
                case "shouldSendContentAvailable": contentAvailable = v.boolValue!
                default: other[k] = v
                }
            }
        }
        self.init(subscriptionID: id, kind: kind, zoneName: zoneName, recordType: recordType, filters: filters, firesOn: firesOn,
                  firesOnce: firesOnce, alertBody: alertBody, shouldSendContentAvailable: contentAvailable)
        otherNotificationInfo = other
    }
}
