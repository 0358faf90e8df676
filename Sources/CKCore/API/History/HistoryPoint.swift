import CKModel
import CKStore

/// `--at REF` and the other points requests name in a zone's history (HistoryReference).
extension RequestContext {
    /// The zone a request reads: the one it names, else the one its point of history names
    /// (`ZONE@SEQ`, a change token), else the default zone.
    func zoneName(_ named: String?, at ref: HistoryReference?) throws -> String {
        if let n = named { return n }
        if let r = ref, let z = try HistoryResolver(db).zoneName(of: r) { return z }
        return ZoneID.defaultZoneName
    }

    /// The sequence number `ref` names in zone `z` (nil without a reference).
    /// `emptyBeforeHistory`: a tag or time before the zone existed is its empty start, rather
    /// than an error (a point in every zone of a database).
    func point(_ ref: HistoryReference?, in z: ZoneStore, emptyBeforeHistory: Bool = false) throws -> Int64? {
        try ref.map { try HistoryResolver(db).resolve($0, in: z, emptyBeforeHistory: emptyBeforeHistory) }
    }
}

extension RequestContext {
    /// The zones a history request reads: the one it names; else the one its references name
    /// (ZONE@SEQ, a token; BAD_REQUEST when they name two); else, with `everyZone`, every zone
    /// of the database; else the default zone.
    func historyZones(_ named: String?, refs: [HistoryReference], everyZone: Bool) throws -> [String] {
        if let n = named { return [n] }
        var found: String?
        for r in refs {
            guard let z = try HistoryResolver(db).zoneName(of: r) else { continue }
            if let n = found, !n.sameBytes(z) {
                throw CloudKitError.badRequest("the references name two zones, '\(Names.describe(n))' and '\(Names.describe(z))'; compare points of one zone")
            }
            found = z
        }
        if let n = found { return [n] }
        return everyZone ? try db.listZones().map(\.zoneID.zoneName) : [ZoneID.defaultZoneName]
    }

    /// History and maintenance of a zone belong to its owner: in the shared database (a
    /// participant's view of someone else's zones) `what` is ACCESS_DENIED, before anything
    /// is read or changed.
    func requireOwnHistory(_ what: String) throws {
        guard caller.scope == .shared else { return }
        var e = CloudKitError(.accessDenied, "\(what) is for the owner of a zone: the zones of the shared database belong to the users who shared them, and so do their histories")
        e.database = .shared
        throw e
    }
}

extension CloudKitAPI {
    /// The user a history filter names: a user record name (`_…`) as it is, or the Apple ID
    /// of a user who signed in on this device.
    func userRecordName(_ raw: String) throws -> String {
        if raw.hasPrefix("_") { return raw }
        guard let u = try store.accounts.user(appleID: raw) else {
            throw CloudKitError(.notFound, "no user '\(Names.describe(raw))' has signed in on this device (give an Apple ID that has, or a user record name)")
        }
        return u.userRecordName
    }
}
