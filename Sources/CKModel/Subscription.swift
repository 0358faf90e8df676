import CKCrypto
import CKJSON

/// A subscription: what the server watches for one user, and how it notifies their devices.
/// Three kinds, as CKSubscription has them: a query subscription (a record type and predicate,
/// public or private database), a zone subscription (one custom zone of the private database),
/// a database subscription (every custom zone of the private or shared database).
public struct Subscription: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable { case query, zone, database }

    public enum FiresOn: String, Sendable, CaseIterable, Comparable {
        case create, update, delete
        public static func < (a: FiresOn, b: FiresOn) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    public var subscriptionID: String
    public var kind: Kind
    /// The zone watched: required for zone subscriptions, optional for query subscriptions
    /// (nil: every zone — `zoneWide`).
    public var zoneName: String?
    /// Required for query subscriptions; optional filter for zone subscriptions.
    public var recordType: String?
    public var filters: [QueryFilter]
    public var firesOn: [FiresOn]
    public var firesOnce: Bool
    /// The Notification Info dictionary (`Subscription.notificationInfoKeys`): what the
    /// notifications it sends carry and how a device shows them (PushPayload).
    public var notificationInfo: [String: JSONValue] = [:]

    public var alertBody: String? {
        get { notificationInfo["alertBody"]?.stringValue }
        set { notificationInfo["alertBody"] = newValue.map(JSONValue.string) }
    }

    public var shouldSendContentAvailable: Bool {
        get { notificationInfo["shouldSendContentAvailable"]?.boolValue ?? false }
        set { notificationInfo["shouldSendContentAvailable"] = newValue ? true : nil }
    }

    /// Whether its notifications raise the app's badge (`shouldBadge`).
    package var badges: Bool { notificationInfo["shouldBadge"]?.boolValue == true }

    /// A string key of the notification info.
    package func info(_ key: String) -> String? { notificationInfo[key]?.stringValue }

    /// A field-name list of the notification info (`additionalFields`, `alertLocalizationArgs`, …).
    package func infoFields(_ key: String) -> [String] { notificationInfo[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }

    public init(subscriptionID: String, kind: Kind, zoneName: String? = nil, recordType: String? = nil, filters: [QueryFilter] = [],
                firesOn: [FiresOn] = FiresOn.allCases, firesOnce: Bool = false, alertBody: String? = nil,
                shouldSendContentAvailable: Bool = false) {
        self.subscriptionID = subscriptionID
        self.kind = kind
        self.zoneName = zoneName
        self.recordType = recordType
        self.filters = filters
        self.firesOn = Array(Set(firesOn)).sorted()
        self.firesOnce = firesOnce
        self.alertBody = alertBody
        self.shouldSendContentAvailable = shouldSendContentAvailable
    }

    /// With a Notification Info dictionary as `parseNotificationInfo` reads it.
    public init(subscriptionID: String, kind: Kind, zoneName: String? = nil, recordType: String? = nil, filters: [QueryFilter] = [],
                firesOn: [FiresOn] = FiresOn.allCases, firesOnce: Bool = false, notificationInfo: [String: JSONValue]) {
        self.init(subscriptionID: subscriptionID, kind: kind, zoneName: zoneName, recordType: recordType, filters: filters,
                  firesOn: firesOn, firesOnce: firesOnce)
        self.notificationInfo = notificationInfo
    }

    /// Subscription IDs follow record-name rules (they name a file, and CloudKit caps them at 255).
    public static func validateID(_ id: String) throws {
        do { try Names.validateName(id, noun: "subscription ID") } catch let e as CloudKitError {
            throw CloudKitError.badRequest("invalid " + e.reason)
        }
    }

    /// The default ID: the same subscription always gets the same ID, so saving it again
    /// replaces it instead of adding a second one.
    public var defaultID: String {
        switch kind {
        case .database: return "database"
        case .zone:
            // With a type, a digest keeps `zone-a` + type `b` apart from zone `a-b`.
            guard let t = recordType else { return Names.bounded("zone-" + (zoneName ?? "")) }
            let digest = Hex.string(SHA256.digest(Array(((zoneName ?? "") + "\u{0}" + t).utf8)).prefix(6))
            return Names.bounded("zone-" + (zoneName ?? "") + "-" + t + "-" + digest)
        case .query:
            var c = self
            c.subscriptionID = ""
            let digest = Hex.string(SHA256.digest(Array(JSONWriter.compact(c.json(ownerRecordName: "")).utf8)).prefix(6))
            return Names.bounded("query-" + (recordType ?? "") + "-" + digest)
        }
    }

    /// The Web Services subscription dictionary (with `database` as a third subscriptionType).
    public func json(ownerRecordName: String) -> JSONValue {
        var o: [String: JSONValue] = ["subscriptionID": .string(subscriptionID), "subscriptionType": .string(kind.rawValue)]
        if let z = zoneName { o["zoneID"] = ZoneID(zoneName: z, ownerRecordName: ownerRecordName).json }
        var info = notificationInfo
        info["shouldSendContentAvailable"] = .bool(shouldSendContentAvailable)
        o["notificationInfo"] = .object(info)
        switch kind {
        case .query:
            var q: [String: JSONValue] = ["recordType": .string(recordType ?? "")]
            if !filters.isEmpty { q["filterBy"] = .array(filters.map(\.json)) }
            o["query"] = .object(q)
            o["firesOn"] = .array(firesOn.map { .string($0.rawValue) })
            o["firesOnce"] = .bool(firesOnce)
            o["zoneWide"] = .bool(zoneName == nil)
        case .zone:
            if let t = recordType { o["recordType"] = .string(t) }
        case .database:
            break
        }
        return .object(o)
    }

    /// Reads a stored subscription back.
    public init(stored j: JSONValue) throws {
        guard let id = j["subscriptionID"]?.stringValue, let k = j["subscriptionType"]?.stringValue, let kind = Kind(rawValue: k) else {
            throw CloudKitError.internalError("stored subscription is damaged")
        }
        let info = j["notificationInfo"]
        self.init(subscriptionID: id, kind: kind, zoneName: j["zoneID"]?["zoneName"]?.stringValue,
                  recordType: j["query"]?["recordType"]?.stringValue ?? j["recordType"]?.stringValue,
                  filters: try (j["query"]?["filterBy"]?.arrayValue ?? []).map(QueryRequest.parseFilter),
                  firesOn: (j["firesOn"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(FiresOn.init(rawValue:)) },
                  firesOnce: j["firesOnce"]?.boolValue ?? false)
        if kind != .query { firesOn = FiresOn.allCases }
        // Absent and false are one (parseNotificationInfo keeps no false flag).
        notificationInfo = (info?.objectValue ?? [:]).filter { !$0.value.isNull && $0.value.boolValue != false }
    }
}
