extension CloudKitError {
    /// NOT_FOUND naming where it looked: "record 'todo-1' not found in zone _defaultZone of the
    /// private database" (at a point of the history: "… as of Lists@12"). An update that
    /// carried a change tag says so first, in the words of recorded CloudKit responses
    /// ("recordChangeTag specified, but record not found").
    package static func recordNotFound(_ name: String, zone: ZoneID, scope: DatabaseScope, at seq: Int64? = nil, tagGiven: Bool = false) -> CloudKitError {
        let when = seq.map { " as of \(Names.describe(zone.zoneName))@\($0)" } ?? ""
        let lead = tagGiven ? "recordChangeTag specified, but " : ""
        var e = CloudKitError(.notFound, "\(lead)record '\(Names.describe(name))' not found in zone \(Names.describe(zone.zoneName)) of the \(scope.rawValue) database\(when)",
                              recordName: name, zoneID: zone)
        e.database = scope
        return e
    }
}
