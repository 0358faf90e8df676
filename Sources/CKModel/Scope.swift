import CKJSON

/// The two environments of a container.
public enum Environment: String, Sendable, CaseIterable {
    case development, production
}

/// CloudKit's three database scopes.
public enum DatabaseScope: String, Sendable, CaseIterable {
    case `public`, `private`, shared
}

/// Identifies a zone: `{zoneName, ownerRecordName, zoneType}` as Web Services spells it.
public struct ZoneID: Hashable, Sendable {
    public static let defaultZoneName = "_defaultZone"
    /// The owner placeholder CloudKit uses where no user owns the zone (the public database).
    public static let defaultOwner = "__defaultOwner__"

    public var zoneName: String
    public var ownerRecordName: String

    public init(zoneName: String, ownerRecordName: String) {
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
    }

    public var isDefault: Bool { zoneName.utf8.elementsEqual(ZoneID.defaultZoneName.utf8) }

    /// `DEFAULT_ZONE` or `REGULAR_CUSTOM_ZONE`, as the service sends on every zoneID.
    public var zoneType: String { isDefault ? "DEFAULT_ZONE" : "REGULAR_CUSTOM_ZONE" }

    public var json: JSONValue {
        ["zoneName": .string(zoneName), "ownerRecordName": .string(ownerRecordName), "zoneType": .string(zoneType)]
    }

    /// Reads a zoneID as a request or a response carries it; `zoneType`, which the server
    /// fills in, is accepted and ignored.
    public init(json: JSONValue) throws {
        guard let o = json.objectValue else { throw CloudKitError.badRequest("zoneID must be an object, got \(json.kindName)") }
        guard let name = o["zoneName"]?.stringValue else { throw CloudKitError.badRequest("zoneID.zoneName must be a string") }
        if let t = o["zoneType"], !t.isNull, t.stringValue == nil { throw CloudKitError.badRequest("zoneID.zoneType must be a string") }
        zoneName = name
        ownerRecordName = o["ownerRecordName"]?.stringValue ?? ZoneID.defaultOwner
    }
}
