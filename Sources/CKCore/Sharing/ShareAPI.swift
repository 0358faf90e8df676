/// What `ck share …` asks of the core: creating shares, finding them by URL, short GUID or
/// name, and changing them as their owner or as a participant. Every change is a records/modify
/// operation on the share record in the owner's zone (ShareWriter), so it is atomic, locked,
/// and in the zone's history like any write.
extension Database {
    private func savedRecord(_ r: OperationResult) throws -> Record {
        switch r {
        case .saved(let rec): return rec
        case .failed(let e): throw e
        case .deleted(let n, _, _): throw CloudKitError.internalError("share '\(n)' was deleted where it was to be saved")
        }
    }

    /// Shares `record` (a hierarchy share) or, with no record, the whole zone, from a custom
    /// zone of the caller's private database.
    public func createShare(zone: String, record: String?, participants: [ShareParticipantRequest], publicPermission: SharePermission,
                            title: String?) throws -> Record {
        try Names.validateZoneName(zone)
        if let r = record { try Names.validateRecordName(r) }
        guard scope == .private else {
            throw CloudKitError(.badRequest, "shares are made by their owner in the private database, not the \(scope.rawValue) database (use --db private)", zoneID: zoneID(zone))
        }
        if zone == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "records in the default zone cannot be shared; CloudKit shares records of custom zones (give --zone)", zoneID: zoneID(zone))
        }
        var op = RecordOperation(type: .create, recordName: record == nil ? ShareInfo.zoneWideName : Identifiers.newRecordName(), recordType: ShareInfo.recordType)
        op.share = .create(forRecord: record, forRecordTag: nil, publicPermission: publicPermission, participants: participants, title: title)
        return try savedRecord(try modify(zone: zone, operations: [op])[0])
    }

    /// Finds a share the caller may name: by share URL or short GUID anywhere (anyone holding
    /// the URL can look at a share, as CloudKit lets them open it); otherwise by name in `zone`
    /// of this database — the share record's own name, or a shared record's (its share), or
    /// with no name the zone's share when it has one.
    public func findShare(_ ref: String?, zone: String?) throws -> ShareLocation {
        try requireRead()
        if let ref = ref, let z = zone, let found = try shareByName(ref, zone: z) { return found }
        if let ref = ref, let guid = ShareInfo.shortGUID(fromReference: ref) {
            if let loc = try allShares().first(where: { $0.share.shortGUID == guid }) { return loc }
            if zone == nil || ref.hasPrefix("http") { throw CloudKitError(.notFound, "no share has the short GUID '\(guid)'") }
        }
        guard let z = zone else {
            throw CloudKitError(.badRequest, "'\(Names.describe(ref ?? ""))' is not a share URL or short GUID; name a share record or a shared record together with its zone (--zone)")
        }
        if let ref = ref { throw CloudKitError(.notFound, "record '\(Names.describe(ref))' is not a share, nor shared, in zone '\(Names.describe(z))'", recordName: ref, zoneID: zoneID(z)) }
        let store = try self.zone(z)
        let snapshot = try store.snapshot()
        var found: [ShareLocation] = []
        for n in try ShareRegistry(zone: store).shareNames() {
            if let r = try snapshot.record(named: n), let s = try ShareState(r), try visibleShare(s) {
                found.append(ShareLocation(owner: store.zoneID.ownerRecordName, zoneName: z, share: r, state: s))
            }
        }
        guard found.count == 1 else {
            throw CloudKitError(found.isEmpty ? .notFound : .badRequest, found.isEmpty
                ? "zone '\(Names.describe(z))' has no share"
                : "zone '\(Names.describe(z))' has \(found.count) shares; name one (its record name, its root's name or its URL)", zoneID: store.zoneID)
        }
        return found[0]
    }

    /// A share the caller takes part in (owner, invited or accepted).
    private func visibleShare(_ s: ShareState) throws -> Bool {
        guard let me = caller.user?.userRecordName, let p = s.participant(me) else { return false }
        return p.acceptanceStatus != .removed
    }

    private func shareByName(_ ref: String, zone z: String) throws -> ShareLocation? {
        try Names.validateRecordName(ref)
        try Names.validateZoneName(z)
        let store = try self.zone(z)
        let snapshot = try store.snapshot()
        guard var r = try snapshot.record(named: ref) else { return nil }
        if r.recordType != ShareInfo.recordType {
            guard let sn = r.share, let sr = try snapshot.record(named: sn) else {
                if scope == .shared, try !canRead(r) { return nil }
                throw CloudKitError(.notFound, "record '\(Names.describe(ref))' is not the root of a share in zone '\(Names.describe(z))'", recordName: ref, zoneID: store.zoneID)
            }
            r = sr
        }
        guard let s = try ShareState(r) else { return nil }
        if scope == .shared, try !visibleShare(s) { return nil }
        return ShareLocation(owner: store.zoneID.ownerRecordName, zoneName: z, share: r, state: s)
    }

    /// Runs one share operation on the share record, in its owner's zone, as the caller.
    public func changeShare(_ loc: ShareLocation, _ change: ShareChange) throws -> OperationResult {
        let me = try requireWrite()
        let db = loc.owner == me.userRecordName && scope == .private ? self : try ownerView(owner: loc.owner)
        var op = RecordOperation(type: change == .delete ? .forceDelete : .forceUpdate, recordName: loc.share.recordName)
        op.share = change
        return try db.modify(zone: loc.zoneName, operations: [op])[0]
    }

    /// Changes a share and returns it as it is now.
    public func updateShare(_ loc: ShareLocation, _ change: ShareChange) throws -> ShareLocation {
        let r = try savedRecord(try changeShare(loc, change))
        guard let s = try ShareState(r) else { throw CloudKitError.internalError("share '\(r.recordName)' lost its share keys") }
        return ShareLocation(owner: loc.owner, zoneName: loc.zoneName, share: r, state: s)
    }

    /// `share accept`: the caller accepts the share a URL or short GUID names.
    public func acceptShare(_ ref: String) throws -> ShareLocation {
        try requireWrite()
        guard let guid = ShareInfo.shortGUID(fromReference: ref) else {
            throw CloudKitError.badRequest("'\(Names.describe(ref))' is not a share URL (\(ShareInfo.urlPrefix)…) or a short GUID")
        }
        guard let loc = try allShares().first(where: { $0.share.shortGUID == guid }) else {
            throw CloudKitError(.notFound, "no share has the short GUID '\(guid)'")
        }
        return try updateShare(loc, .accept)
    }

    /// The caller's shares: in the private database those they own (in `zone`, if given); in
    /// the shared database those they are invited to or accepted.
    public func listShares(zone: String?) throws -> [ShareLocation] {
        try requireRead()
        let me = try caller.requireUser(for: "listing shares").userRecordName
        if let z = zone { try Names.validateZoneName(z) }
        return try allShares().filter { loc in
            if let z = zone, !loc.zoneName.sameBytes(z) { return false }
            switch scope {
            case .private: return loc.owner == me
            case .shared: return loc.owner != me && (loc.state.participant(me).map { $0.acceptanceStatus != .removed } ?? false)
            case .public: return false
            }
        }
    }

    /// A share record as a lookup shows it, with `currentUserParticipant` for a caller taking part.
    public func shareJSON(_ loc: ShareLocation, style: ResponseStyle, withZoneID: Bool = true) -> JSONValue {
        guard case .object(var o) = loc.share.response(style, withZoneID: withZoneID) else { return loc.share.response(style) }
        if let me = caller.user?.userRecordName, let p = loc.state.participant(me) { o["currentUserParticipant"] = p.json }
        return .object(o)
    }

    /// The ShortGUID Result dictionary (reference §1.6) for an accepted share.
    public func acceptedShareJSON(_ loc: ShareLocation, style: ResponseStyle) -> JSONValue {
        var o: [String: JSONValue] = [
            "containerIdentifier": .string(address.container), "environment": .string(address.environment.rawValue),
            "databaseScope": .string(caller.user?.userRecordName == loc.owner ? "PRIVATE" : "SHARED"),
            "zoneID": loc.zoneID.json, "shortGUID": .string(loc.share.shortGUID ?? ""), "share": shareJSON(loc, style: style),
            "webpageURL": .string(ShareInfo.url(shortGUID: loc.share.shortGUID ?? "")),
        ]
        if let owner = loc.state.owner {
            o["ownerIdentity"] = ["userRecordName": .string(owner.userRecordName), "lookupInfo": ["emailAddress": .string(owner.emailAddress)]]
        }
        if let root = loc.state.rootRecordName { o["rootRecordName"] = .string(root) }
        if let me = caller.user?.userRecordName, let p = loc.state.participant(me) {
            o["participantPermission"] = .string(p.permission.rawValue)
            o["participantStatus"] = .string(p.acceptanceStatus.rawValue)
            o["participantType"] = .string(p.type.rawValue)
        }
        return .object(o)
    }
}
