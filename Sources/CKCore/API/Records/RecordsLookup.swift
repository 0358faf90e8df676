import CKJSON
import CKModel
import CKStore

/// `records/lookup`: records by name, one result per name in order: the record, or NOT_FOUND
/// (also for a record the caller may not read). ck adds `at`: the records as of a point of the
/// zone's history (`record get --at REF`).
public struct LookupRecordsRequest: Sendable {
    public var recordNames: [String]
    /// nil: the zone `at` names, else `_defaultZone`.
    public var zoneName: String?
    public var desiredKeys: Set<String>?
    public var at: HistoryReference?
    /// `numbersAsStrings`: number fields answered as strings (NumbersAsStrings).
    public var numbersAsStrings = false
    /// By index: a record's own `desiredKeys`, over the request's.
    public var itemOptions: [Int: ItemOptions] = [:]

    public init(recordNames: [String], zoneName: String? = nil, desiredKeys: Set<String>? = nil, at: HistoryReference? = nil) {
        self.recordNames = recordNames
        self.zoneName = zoneName
        self.desiredKeys = desiredKeys
        self.at = at
    }

    /// The Web Services body: `{records: [{recordName, desiredKeys?}], zoneID?, desiredKeys?,
    /// numbersAsStrings?, assetPrivacyMaskType?}`. `assetPrivacyMaskType`, an option CloudKit
    /// JS's fetchRecords passes on, is taken and ignored: ck's downloadURLs have no mask.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "lookup request", keys: ["records", "zoneID", "desiredKeys", "numbersAsStrings", "assetPrivacyMaskType"])
        _ = try RequestBody.string(o["assetPrivacyMaskType"], "assetPrivacyMaskType")
        guard let list = o["records"]?.arrayValue else { throw CloudKitError.badRequest("lookup request needs a 'records' array") }
        try Limits.checkItems(list.count)
        var options: [Int: ItemOptions] = [:]
        recordNames = try list.enumerated().map { i, item in
            let r = try RequestBody.object(item, "records[\(i)]", keys: ["recordName", "desiredKeys"])
            guard let n = r["recordName"]?.stringValue else { throw CloudKitError.badRequest("records[\(i)] needs a 'recordName' string") }
            try Names.validateRecordName(n)
            options[i] = try ItemOptions.parse(r)
            return n
        }
        itemOptions = options
        zoneName = try RequestBody.zoneName(o["zoneID"])
        desiredKeys = try RequestBody.desiredKeys(o["desiredKeys"])
        numbersAsStrings = try RequestBody.bool(o["numbersAsStrings"], "numbersAsStrings") ?? false
        at = nil
    }
}

extension CloudKitAPI {
    public func lookupRecords(_ r: LookupRecordsRequest, as caller: Caller) throws -> RecordsResponse {
        for n in r.recordNames { try Names.validateRecordName(n) }
        let ctx = try preflight(.recordsLookup, caller, zones: [r.zoneName ?? ZoneID.defaultZoneName])
        if r.at == nil { try ensureUserRecords(r.recordNames, zone: r.zoneName ?? ZoneID.defaultZoneName, caller: caller) }
        let z = try ctx.db.zone(try ctx.zoneName(r.zoneName, at: r.at))
        let seq = try ctx.point(r.at, in: z)
        let snap = try z.snapshot()
        // As of a point: what the caller could read then.
        let history = seq.map { _ in ctx.gate.history(z) }
        let results: [OperationResult] = try r.recordNames.map { n in
            if let e = try ctx.options.faults?.fault(.recordsLookup, zone: z, recordName: n) { return try ctx.gate.admit(.failed(e), zone: z.zoneID) }
            if let seq, let history {
                guard let rec = try history.visibleVersion(of: n, at: seq) else { return .failed(ctx.gate.notFound(n, zone: z.zoneID, at: seq)) }
                return .saved(rec)
            }
            guard let rec = try snap.record(named: n) else { return .failed(ctx.gate.notFound(n, zone: z.zoneID)) }
            return try ctx.gate.admit(.saved(rec), zone: z.zoneID)
        }
        var response = RecordsResponse(results, shape: .lookup, style: ctx.style.numbersAsStrings(r.numbersAsStrings), desiredKeys: r.desiredKeys)
        response.itemOptions = r.itemOptions
        return response
    }
}
