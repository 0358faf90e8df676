import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// One caller of the API — an app on a device, as a user, in one database — making the calls
/// the tests of the store's behaviour make (records, zones, feeds, subscriptions,
/// notifications, shares): each is one typed request of CloudKitAPI, as the CLI and `ck serve`
/// send it, and its answer unpacked into the values the tests compare. So those tests hold
/// whatever shape `Database` takes. A request of one zone, subscription or share whose item
/// fails throws that item's error, as a call of one item fails; record operations keep their
/// per-operation results.
struct APIClient {
    let api: CloudKitAPI
    let caller: Caller
    /// What holds the data directory (a TempStore, which removes it when it goes).
    var keeps: AnyObject?

    /// The same app in another database, on another device, or both.
    func with(_ scope: DatabaseScope? = nil, device: String? = nil) -> APIClient {
        var c = caller
        if let s = scope { c.scope = s }
        if let d = device { c.deviceID = d }
        return APIClient(api: api, caller: c, keeps: keeps)
    }

    // MARK: records

    /// records/modify: one result per operation, in order.
    @discardableResult
    func modify(zone: String = ZoneID.defaultZoneName, operations: [RecordOperation], atomic: Bool = true) throws -> [OperationResult] {
        try api.modifyRecords(ModifyRequest(operations: operations, atomic: atomic, zoneName: zone), as: caller).results
    }

    /// records/lookup: one result per name, in order.
    func lookup(zone: String = ZoneID.defaultZoneName, recordNames: [String]) throws -> [OperationResult] {
        try api.lookupRecords(LookupRecordsRequest(recordNames: recordNames, zoneName: zone), as: caller).results
    }

    /// records/query: one page; `at` a point of the zone's history (`--at`), else now.
    func query(zone: String = ZoneID.defaultZoneName, _ q: QueryRequest, at: HistoryReference? = nil) throws -> QueryRecordsResponse {
        try api.queryRecords(QueryRecordsRequest(q, zoneName: zone, at: at), as: caller)
    }

    /// Every record of a zone the caller may read now (`record list`), by name.
    func records(zone: String) throws -> [String: Record] {
        var out: [String: Record] = [:]
        try api.listRecords(ListRecordsRequest(zoneName: zone), as: caller) { batch in
            for r in batch.records { out[r.recordName] = r }
            return true
        }
        return out
    }

    // MARK: zones

    func createZone(_ name: String) throws { try one(api.modifyZones(ZonesModifyRequest(operations: [.init(.create, name)]), as: caller)) }

    func deleteZone(_ name: String) throws { try one(api.modifyZones(ZonesModifyRequest(operations: [.init(.delete, name)]), as: caller)) }

    func purgeZone(_ name: String) throws { try one(api.purgeZones(ZonesPurgeRequest(zoneNames: [name]), as: caller)) }

    // MARK: feeds

    /// changes/zone of one zone: its page, or its error thrown.
    func zoneChanges(zone: String, since token: String?, limit: Int? = nil) throws -> ZoneChangesResult {
        try page(api.zoneChanges(ZoneChangesRequest(zones: [.init(zoneName: zone, syncToken: token, resultsLimit: limit)]), as: caller))
    }

    /// ck's `zone changes --all` of one zone: every page as one.
    func allZoneChanges(zone: String, since token: String?, limit: Int? = nil, while more: @escaping () -> Bool = { true }) throws -> ZoneChangesResult {
        try page(api.allZoneChanges(ZoneChangesRequest(zones: [.init(zoneName: zone, syncToken: token, resultsLimit: limit)]), as: caller, while: more))
    }

    /// changes/database.
    func databaseChanges(since token: String?, limit: Int? = nil) throws -> DatabaseChangesResult {
        try api.databaseChanges(DatabaseChangesRequest(syncToken: token, resultsLimit: limit), as: caller).result
    }

    /// ck's `database changes --all`.
    func allDatabaseChanges(since token: String?, limit: Int? = nil) throws -> DatabaseChangesResult {
        try api.allDatabaseChanges(DatabaseChangesRequest(syncToken: token, resultsLimit: limit), as: caller).result
    }

    private func page(_ r: ZoneChangesResponse) throws -> ZoneChangesResult {
        switch r.zones[0] {
        case .page(let p, _): return p
        case .failed(let e): throw e
        }
    }

    // MARK: history

    /// The zone's latest change (`ck log -n 1`): 0 before the first.
    func head(zone: String) throws -> Int64 {
        try api.log(LogRequest(zoneName: zone, limit: 1), as: caller).document["changes"]?.arrayValue?.first?["seq"]?.int64Value ?? 0
    }

    /// ck's `gc --keep`: keeps the last `keep` changes whole.
    func compactHistory(zone: String, keep: Int64 = 0) throws {
        _ = try api.compactHistory(GCRequest(zoneName: zone, keep: keep), as: caller)
    }

    /// ck's `token expire`: the zone's token now.
    func expireTokens(zone: String) throws -> String {
        try XCTUnwrap(api.expireTokens(ExpireTokensRequest(zoneName: zone), as: caller).document["syncToken"]?.stringValue)
    }

    // MARK: schema

    /// ck's `schema index add` (development): by default the `"___recordID" QUERYABLE` a query
    /// without a filter needs.
    func addIndexes(_ type: String, _ field: String = "___recordID", _ indexes: [IndexNeed.Index] = [.queryable]) throws {
        _ = try api.addSchemaIndexes(SchemaIndexRequest(recordType: type, fieldName: field, indexes: indexes), as: caller)
    }

    // MARK: subscriptions and notifications

    func saveSubscription(_ s: Subscription) throws { try one(api.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(s)]), as: caller)) }

    func deleteSubscription(_ id: String) throws { try one(api.modifySubscriptions(SubscriptionsModifyRequest(operations: [.delete(id)]), as: caller)) }

    /// subscriptions/lookup of one ID.
    func subscription(_ id: String) throws -> JSONValue {
        try one(api.lookupSubscriptions(SubscriptionsLookupRequest(subscriptionIDs: [id]), as: caller))
    }

    /// The IDs of the caller's subscriptions (subscriptions/list).
    func subscriptionIDs() throws -> [String] {
        try api.listSubscriptions(as: caller).results.compactMap { $0.value?["subscriptionID"]?.stringValue }
    }

    /// The device's unread notifications. Reading registers the device for notifications (as
    /// `ck notifications` does): from then on it receives them.
    func unread() throws -> [JSONValue] { try api.listNotifications(NotificationsRequest(), as: caller).notifications }

    /// Registers the device for notifications, as reading them does.
    func registerForNotifications() throws { _ = try unread() }

    /// Marks every notification the device has read.
    func markRead() throws {
        try api.markNotificationsRead(through: try api.listNotifications(NotificationsRequest(), as: caller).cursor, as: caller)
    }

    // MARK: shares

    /// `share create`: the share record's name and short GUID.
    @discardableResult
    func createShare(zone: String, record: String?, participants: [ShareParticipantRequest], publicPermission: SharePermission = .none) throws -> (recordName: String, shortGUID: String) {
        let share = try one(api.createShare(ShareCreateRequest(zoneName: zone, recordName: record, participants: participants, publicPermission: publicPermission), as: caller))
        return (try XCTUnwrap(share["recordName"]?.stringValue), try XCTUnwrap(share["shortGUID"]?.stringValue))
    }

    /// `share accept`, in the shared database whatever the caller's.
    func acceptShare(_ shortGUID: String) throws {
        try one(api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(shortGUID)]), as: caller.inDatabase(.shared)))
    }

    /// `share leave`.
    func leaveShare(_ shortGUID: String) throws {
        try one(api.updateShare(ShareUpdateRequest(reference: shortGUID, update: .leave), as: caller))
    }

    /// The one item of an answer, or its error thrown.
    @discardableResult
    private func one(_ r: ItemsResponse) throws -> JSONValue {
        XCTAssertEqual(r.results.count, 1)
        switch r.results[0] {
        case .value(let v): return v
        case .failed(let e): throw e
        }
    }
}

extension TempStore {
    /// An app on a device of this store, through the API on the store's clock: by default the
    /// device's signed-in account in the private database.
    func client(_ c: Caller = caller()) -> APIClient { APIClient(api: api, caller: c, keeps: self) }
}
