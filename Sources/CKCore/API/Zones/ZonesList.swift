import CKModel
import CKStore

/// `zones/list` (GET): the database's zones — the default zone first (but in the shared
/// database, which has none), then custom zones by the bytes of their names. In the shared
/// database, only the zones of shares the caller accepted: a zone shared with nobody else is
/// no zone of theirs.
extension CloudKitAPI {
    public func listZones(as caller: Caller) throws -> ItemsResponse {
        let ctx = try preflight(.zonesList, caller)
        return ItemsResponse("zones", try ctx.db.listZones().map { .value(try ctx.db.zoneJSON($0)) }, for: ctx.audience)
    }
}
