import CKJSON

/// What a subscription's notification info puts in its notifications, and the push payload a
/// device receives for one (`{aps: {…}, ck: {…}}`): the one builder of that payload, for
/// `ck notifications --format aps` and for a web client's long-poll (WebCourier).
extension Subscription {
    /// The keys a notification carries, as native `CKNotification` names them: the alert's
    /// texts and localization keys, `soundName`, `category`, `contentAvailable`,
    /// `mutableContent`, `collapseID` (the `apns-collapse-id` header it is pushed with); and
    /// for a query notification, about `record`, `recordFields` (the fields of
    /// `additionalFields`) and the localization arguments' values. `badge` is counted on
    /// delivery (NotificationInbox).
    package func notificationContent(record: Record?) -> [String: JSONValue] {
        var n: [String: JSONValue] = [:]
        for k in ["alertBody", "alertLocalizationKey", "alertActionLocalizationKey", "alertLaunchImage", "title", "titleLocalizationKey",
                  "subtitle", "subtitleLocalizationKey", "soundName", "category"] {
            if let v = info(k) { n[k] = .string(v) }
        }
        if let c = info("collapseIDKey") { n["collapseID"] = .string(c) }
        if shouldSendContentAvailable { n["contentAvailable"] = true }
        if notificationInfo["shouldSendMutableContent"]?.boolValue == true { n["mutableContent"] = true }
        guard let r = record else { return n }
        // Localization arguments name fields; the notification carries their values, as text.
        for k in ["alertLocalizationArgs", "titleLocalizationArgs", "subtitleLocalizationArgs"] where notificationInfo[k] != nil {
            n[k] = .array(infoFields(k).map { .string(r.fields[$0].map(Self.argumentText) ?? "") })
        }
        // Only values a push can carry (CKNotificationInfo.desiredKeys: strings, numbers,
        // dates, references, locations); a field the record lacks is left out.
        var fields: [String: JSONValue] = [:]
        for name in infoFields("additionalFields") {
            guard let f = r.fields[name], !f.type.isList,
                  [.string, .int64, .double, .timestamp, .reference, .location].contains(f.type.base) else { continue }
            fields[name] = f.value
        }
        if !fields.isEmpty { n["recordFields"] = .object(fields) }
        return n
    }

    /// A field's value as a localization argument: a string as it is, anything else as JSON.
    package static func argumentText(_ f: RecordField) -> String {
        if let s = f.value.stringValue { return s }
        if f.type.base == .reference, let name = f.value["recordName"]?.stringValue { return name }
        return JSONWriter.compact(f.value)
    }
}

/// The push payload of a notification as a device receives it from APNs: `aps` (the alert,
/// sound, badge, category and the content-available and mutable-content flags) and `ck`
/// (CloudKit's part, in its short keys: `cid` the container, `nid` the notification, and one
/// of `qry` a query
/// subscription's, `fet` a zone's, `met` a database's, with `dbs` 0 public, 1 private, 2
/// shared; `sid` the subscription; `zid`/`zoid` the zone and its owner; `rid` the record;
/// `fo` 1 created, 2 updated, 3 deleted; `af` the record's fields). CloudKit JS's
/// `parseRawNotification` reads it back.
public enum PushPayload {
    public static func payload(_ n: JSONValue) -> JSONValue {
        var detail: [String: JSONValue] = [:]
        let dbs: Int64 = ["public": 0, "private": 1, "shared": 2][n["databaseScope"]?.stringValue ?? ""] ?? 1
        detail["dbs"] = .int(dbs)
        if let s = n["subscriptionID"] { detail["sid"] = s }
        if let z = n["zoneID"]?["zoneName"] { detail["zid"] = z }
        if let o = n["zoneID"]?["ownerRecordName"] { detail["zoid"] = o }
        if let r = n["recordName"] { detail["rid"] = r }
        if let reason = n["queryNotificationReason"]?.stringValue {
            detail["fo"] = .int(["recordCreated": 1, "recordUpdated": 2, "recordDeleted": 3][reason] ?? 2)
        }
        if let af = n["recordFields"], af.objectValue?.isEmpty == false { detail["af"] = af }
        let kind = ["query": "qry", "recordZone": "fet", "database": "met"][n["notificationType"]?.stringValue ?? ""] ?? "met"
        var ck: [String: JSONValue] = [kind: .object(detail)]
        if let c = n["containerIdentifier"] { ck["cid"] = c }
        if let id = n["notificationID"] { ck["nid"] = id }

        var alert: [String: JSONValue] = [:]
        let alertKeys: [(String, String)] = [
            ("alertBody", "body"), ("alertLocalizationKey", "loc-key"), ("alertLocalizationArgs", "loc-args"),
            ("alertActionLocalizationKey", "action-loc-key"), ("alertLaunchImage", "launch-image"),
            ("title", "title"), ("titleLocalizationKey", "title-loc-key"), ("titleLocalizationArgs", "title-loc-args"),
            ("subtitle", "subtitle"), ("subtitleLocalizationKey", "subtitle-loc-key"), ("subtitleLocalizationArgs", "subtitle-loc-args"),
        ]
        for (from, to) in alertKeys { if let v = n[from] { alert[to] = v } }
        var aps: [String: JSONValue] = [:]
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let s = n["soundName"] { aps["sound"] = s }
        if let b = n["badge"] { aps["badge"] = b }
        if let c = n["category"] { aps["category"] = c }
        if n["contentAvailable"]?.boolValue == true { aps["content-available"] = 1 }
        if n["mutableContent"]?.boolValue == true { aps["mutable-content"] = 1 }
        return ["aps": .object(aps), "ck": .object(ck)]
    }
}
