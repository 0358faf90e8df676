/// The two environments of a container.
public enum Environment: String, Sendable, CaseIterable {
    case development, production
}

/// CloudKit's three database scopes.
public enum DatabaseScope: String, Sendable, CaseIterable {
    case `public`, `private`, shared
}

/// Identifies a zone: `{zoneName, ownerRecordName}` as Web Services spells it.
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

    public var json: JSONValue {
        ["zoneName": .string(zoneName), "ownerRecordName": .string(ownerRecordName)]
    }

    public init(json: JSONValue) throws {
        guard let o = json.objectValue else { throw CloudKitError.badRequest("zoneID must be an object, got \(json.kindName)") }
        guard let name = o["zoneName"]?.stringValue else { throw CloudKitError.badRequest("zoneID.zoneName must be a string") }
        zoneName = name
        ownerRecordName = o["ownerRecordName"]?.stringValue ?? ZoneID.defaultOwner
    }
}
