import CKModel
import CKStore

/// The bytes of one record's asset field (`record get NAME --asset FIELD`; what an asset's
/// `downloadURL` serves). The record is looked up as records/lookup looks it up: the same
/// faults, the same permission gate, NOT_FOUND for what the caller may not read.
public struct AssetDownloadRequest: Sendable {
    public var recordName: String
    public var fieldName: String
    public var zoneName: String?
    public var at: HistoryReference?

    public init(recordName: String, fieldName: String, zoneName: String? = nil, at: HistoryReference? = nil) {
        self.recordName = recordName
        self.fieldName = fieldName
        self.zoneName = zoneName
        self.at = at
    }
}

extension CloudKitAPI {
    public func downloadAsset(_ r: AssetDownloadRequest, as caller: Caller) throws -> [UInt8] {
        try Names.validateFieldName(r.fieldName)
        let found = try lookupRecords(LookupRecordsRequest(recordNames: [r.recordName], zoneName: r.zoneName, at: r.at), as: caller).results[0]
        if let e = found.error { throw e }
        let name = Names.describe(r.recordName)
        guard case .saved(let rec) = found else { throw CloudKitError.internalError("records/lookup answered neither a record nor an error") }
        guard let f = rec.fields[r.fieldName] else {
            throw CloudKitError(.notFound, "record '\(name)' has no field '\(r.fieldName)'", recordName: r.recordName, zoneID: rec.zoneID)
        }
        guard f.type == FieldType(.asset), let sum = f.value["fileChecksum"]?.stringValue else {
            throw CloudKitError(.badRequest, "field '\(r.fieldName)' of record '\(name)' is \(f.type), not an ASSETID", recordName: r.recordName, zoneID: rec.zoneID)
        }
        if AssetValue.isRemote(f.value) {
            throw CloudKitError(.notFound, "the bytes of asset field '\(r.fieldName)' of record '\(name)' are not in this data directory: the record was loaded from a server response and its downloadURL points there (\(Names.describe(f.value["downloadURL"]?.stringValue ?? "")))", recordName: r.recordName, zoneID: rec.zoneID)
        }
        guard let bytes = try store.assets.read(checksum: sum) else {
            var e = CloudKitError.internalError("asset \(sum) of record '\(name)' is missing from the store")
            e.nextStep = .repairDataDirectory
            throw e
        }
        return bytes
    }
}
