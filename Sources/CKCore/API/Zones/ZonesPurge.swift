import CKModel
import CKStore

/// ck's purge of custom zones (CloudKit's purge, as when the user clears an app's data in
/// Settings): like a deletion, the zone, its records and its history go, and every change token
/// of it expires; `changes/database` reports `{zoneID, deleted: true, purged: true}`. Only the
/// owner purges, from their private database. Every name is checked first: one that cannot be
/// purged purges nothing. No client sends it: it is no endpoint, and no fault fails it.
public struct ZonesPurgeRequest: Sendable {
    public var zoneNames: [String]
    /// A zone that is not there counts as purged and is left out of the answer.
    public var ifExists: Bool

    public init(zoneNames: [String], ifExists: Bool = false) {
        self.zoneNames = zoneNames
        self.ifExists = ifExists
    }
}

extension CloudKitAPI {
    public func purgeZones(_ r: ZonesPurgeRequest, as caller: Caller) throws -> ItemsResponse {
        for n in r.zoneNames { try Names.validateZoneName(n) }
        var seen = Set<NameKey>()
        let names = r.zoneNames.filter { seen.insert(NameKey($0)).inserted }
        let ctx = try preflight(nil, caller, need: .none)
        let db = ctx.db
        var present: [String] = []
        for n in names {
            try ZoneLifecycle(db).checkPurge(n)
            do { _ = try db.zone(n); present.append(n) } catch let e as CloudKitError where e.code == .zoneNotFound && r.ifExists {}
        }
        if !present.isEmpty { try db.requireWrite() }
        var out: [ItemsResponse.Item] = []
        for n in present {
            do { try ZoneLifecycle(db).purge(n) } catch let e as CloudKitError where e.code == .zoneNotFound && r.ifExists { continue }
            out.append(.value(["zoneID": db.zoneID(n).json, "deleted": true, "purged": true]))
        }
        return ItemsResponse("zones", out, for: ctx.audience)
    }
}
