import CKModel

/// What the share entries of the API (API/Sharing) ask of a database: creating shares, finding
/// them by URL, short GUID or name, and changing them as their owner or as a participant. Every
/// change is a records/modify operation on the share record in the owner's zone (ShareWriter),
/// so it is atomic, locked, and in the zone's history like any write. What a caller may see of
/// a share is ShareView's rule: a share that does not exist for them is NOT_FOUND, in the
/// words an unknown short GUID gets.
package struct Shares {
    let db: Database

    package init(_ db: Database) {
        self.db = db
    }

    private func savedRecord(_ r: OperationResult) throws -> Record {
        switch r {
        case .saved(let rec): return rec
        case .failed(let e): throw e
        case .deleted(let n, _, _): throw CloudKitError.internalError("share '\(n)' was deleted where it was to be saved")
        }
    }

    /// Shares `record` (a hierarchy share) or, with no record, the whole zone, from a custom
    /// zone of the caller's private database. `name`: the share record's (a remote's share
    /// mirrored here keeps its name); nil: a new one.
    package func createShare(zone: String, record: String?, participants: [ShareParticipantRequest], publicPermission: SharePermission,
                     title: String?, name: String? = nil, options: RequestOptions = RequestOptions()) throws -> ShareLocation {
        try Names.validateZoneName(zone)
        if let r = record { try Names.validateRecordName(r) }
        if let n = name { try Names.validateRecordName(n) }
        guard db.scope == .private else {
            throw CloudKitError(.badRequest, "shares are made by their owner in the private database, not the \(db.scope.rawValue) database", zoneID: db.zoneID(zone))
        }
        if zone == ZoneID.defaultZoneName {
            throw CloudKitError(.badRequest, "records in the default zone cannot be shared; CloudKit shares records of custom zones", zoneID: db.zoneID(zone))
        }
        var op = RecordOperation(type: .create, recordName: record == nil ? ShareInfo.zoneWideName : name ?? Identifiers.newRecordName(), recordType: ShareInfo.recordType)
        op.share = .create(forRecord: record, forRecordTag: nil, publicPermission: publicPermission, participants: participants, title: title)
        let share = try savedRecord(try db.modify(zone: zone, ModifyBatch([op], options: options)).results[0])
        guard let state = try ShareState(share) else { throw CloudKitError.internalError("share '\(share.recordName)' lost its share keys") }
        return ShareLocation(owner: share.zoneID.ownerRecordName, zoneName: zone, share: share, state: state)
    }

    /// NOT_FOUND for a short GUID that names no share the caller may see.
    package static func unknownShortGUID(_ guid: String) -> CloudKitError {
        CloudKitError(.notFound, "no share has the short GUID '\(Names.describe(guid))'")
    }

    /// The share a short GUID names, when the caller may see it (ShareView); else NOT_FOUND,
    /// the same whether no share has it or the caller may not see the one that has.
    package func share(shortGUID guid: String) throws -> ShareLocation {
        guard let loc = try ShareLocation.all(paths: db.paths, container: db.address.container, environment: db.address.environment, clock: db.clock).first(where: { $0.share.shortGUID == guid }), loc.state.view(for: db.me) != nil else {
            throw Shares.unknownShortGUID(guid)
        }
        return loc
    }

    /// Finds a share the caller may name: by share URL or short GUID anywhere (anyone holding
    /// the URL of a public share can look at it; otherwise its participants); otherwise by name
    /// in `zone` of this database — the share record's own name, or a shared record's (its
    /// share), or with no name the zone's share when it has one.
    package func findShare(_ ref: String?, zone: String?) throws -> ShareLocation {
        try db.requireRead()
        if let ref = ref, let z = zone, let found = try shareByName(ref, zone: z) { return found }
        if let ref = ref, let guid = ShareInfo.shortGUID(fromReference: ref) {
            do { return try share(shortGUID: guid) } catch let e as CloudKitError where zone != nil && !ref.hasPrefix("http") && e.code == .notFound {}
        }
        guard let z = zone else {
            throw CloudKitError(.badRequest, "'\(Names.describe(ref ?? ""))' is not a share URL or short GUID; name a share record or a shared record together with its zone")
        }
        if let ref = ref { throw CloudKitError(.notFound, "record '\(Names.describe(ref))' is not a share, nor shared, in zone '\(Names.describe(z))'", recordName: ref, zoneID: db.zoneID(z)) }
        let store = try db.zone(z)
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
        guard let me = db.me, let p = s.participant(me) else { return false }
        return p.acceptanceStatus != .removed
    }

    /// A share by name in a zone of this database: in the private database any of the
    /// caller's; in the shared database only one they take part in (a record they may not see
    /// is no record, and names no share).
    private func shareByName(_ ref: String, zone z: String) throws -> ShareLocation? {
        try Names.validateRecordName(ref)
        try Names.validateZoneName(z)
        let store = try db.zone(z)
        let snapshot = try store.snapshot()
        guard var r = try snapshot.record(named: ref) else { return nil }
        if r.recordType != ShareInfo.recordType {
            guard let sn = r.share, let sr = try snapshot.record(named: sn) else {
                if db.scope == .shared, try !db.canRead(r) { return nil }
                throw CloudKitError(.notFound, "record '\(Names.describe(ref))' is not the root of a share in zone '\(Names.describe(z))'", recordName: ref, zoneID: store.zoneID)
            }
            r = sr
        }
        guard let s = try ShareState(r) else { return nil }
        if db.scope == .shared, try !visibleShare(s) { return nil }
        return ShareLocation(owner: store.zoneID.ownerRecordName, zoneName: z, share: r, state: s)
    }

    /// Runs one share operation on the share record, in its owner's zone, as the caller.
    package func changeShare(_ loc: ShareLocation, _ change: ShareChange, options: RequestOptions = RequestOptions()) throws -> OperationResult {
        let me = try db.requireWrite()
        let target = loc.owner == me.userRecordName && db.scope == .private ? db : try db.ownerView(owner: loc.owner)
        var op = RecordOperation(type: change == .delete ? .forceDelete : .forceUpdate, recordName: loc.share.recordName)
        op.share = change
        return try target.modify(zone: loc.zoneName, ModifyBatch([op], options: options)).results[0]
    }

    /// Changes a share and returns it as it is now.
    package func updateShare(_ loc: ShareLocation, _ change: ShareChange, options: RequestOptions = RequestOptions()) throws -> ShareLocation {
        let r = try savedRecord(try changeShare(loc, change, options: options))
        guard let s = try ShareState(r) else { throw CloudKitError.internalError("share '\(r.recordName)' lost its share keys") }
        return ShareLocation(owner: loc.owner, zoneName: loc.zoneName, share: r, state: s)
    }

    /// The caller's shares: in the private database those they own (in `zone`, if given); in
    /// the shared database those they are invited to or accepted.
    package func listShares(zone: String?) throws -> [ShareLocation] {
        try db.requireRead()
        let me = try db.caller.requireUser(for: "listing shares").userRecordName
        if let z = zone { try Names.validateZoneName(z) }
        return try ShareLocation.all(paths: db.paths, container: db.address.container, environment: db.address.environment, clock: db.clock).filter { loc in
            if let z = zone, !loc.zoneName.sameBytes(z) { return false }
            switch db.scope {
            case .private: return loc.owner == me
            case .shared: return loc.owner != me && (loc.state.participant(me).map { $0.acceptanceStatus != .removed } ?? false)
            case .public: return false
            }
        }
    }

    /// Whether the caller may read a record of a share's zone (the root a ShortGUID result
    /// carries): the owner any, anyone else those shared with them.
    package func mayRead(_ r: Record, in loc: ShareLocation) throws -> Bool {
        guard let me = db.me else { return false }
        if me == loc.owner { return true }
        guard case .present(let z) = try ZoneStore.load(directory: DataPaths.zone(database: db.paths.database(db.address.container, db.address.environment, .private, user: loc.owner), zoneName: loc.zoneName),
                                                        zoneID: loc.zoneID) else { return false }
        let snapshot = try z.snapshot()
        return try ShareVisibility.permission(me, on: r) { try snapshot.record(named: $0) } != nil
    }

    /// A record of a share's zone, read from its owner's zone.
    package func record(_ name: String, in loc: ShareLocation) throws -> Record? {
        guard case .present(let z) = try ZoneStore.load(directory: DataPaths.zone(database: db.paths.database(db.address.container, db.address.environment, .private, user: loc.owner), zoneName: loc.zoneName),
                                                        zoneID: loc.zoneID) else { return nil }
        return try z.record(named: name)
    }
}
