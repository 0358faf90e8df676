import CKJSON

/// The Web Services `operationType`s of `records/modify`.
public enum RecordOperationType: String, Sendable, CaseIterable {
    case create, update, forceUpdate, replace, forceReplace, delete, forceDelete

    package var isDelete: Bool { self == .delete || self == .forceDelete }
    package var checksTag: Bool { self == .update || self == .replace || self == .delete }
    package var replacesFields: Bool { self == .replace || self == .forceReplace }
}

/// One operation of a modify request, already validated for shape and names.
public struct RecordOperation: Sendable {
    public var type: RecordOperationType
    public var recordName: String?
    public var recordType: String?
    public var recordChangeTag: String?
    /// Field values to set; nil clears a field.
    public var fields: [String: RecordField?]
    /// The values of fields sent without a `type`, as given. Saving gives each the type the
    /// schema (or the record being changed) has for its field, as CloudKit does; `fields`
    /// holds the type the value suggests, used when neither knows the field.
    public var untyped: [String: JSONValue] = [:]
    /// `createShortGUID: true`: give the record a short GUID (for sharing) if it has none.
    public var createShortGUID = false
    public var parent: String?
    /// `"parent": null` (`ck record save --no-parent`): the operation takes the record's parent
    /// away. Without it, an update keeps the parent the record has (a replace drops it).
    public var clearsParent = false
    /// The zone named by the record's own zoneID, when it carried one.
    public var zoneName: String?
    /// A save that would leave the record exactly as it is writes nothing (no new change, no
    /// new tag): what `ck import` asks, so re-importing an unchanged record is free.
    public var skipIfUnchanged = false
    /// A share operation (Sharing/Share.swift): the record is a `cloudkit.share`.
    public var share: ShareChange?
    /// A field value that did not fit its type when the request was read: this operation
    /// fails with it (BAD_REQUEST) and the others run, as CloudKit answers such a value — per
    /// record, in a 200 (unless the batch is atomic).
    public var invalid: CloudKitError?
    /// `numbersAsStrings`: a value sent without `type` for a field the schema (or the record)
    /// makes INT64 or DOUBLE may be a string of a number.
    public var numbersAsStrings = false

    public init(type: RecordOperationType, recordName: String? = nil, recordType: String? = nil, recordChangeTag: String? = nil,
                fields: [String: RecordField?] = [:], parent: String? = nil) {
        self.type = type
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.parent = parent
    }
}

extension RecordOperation {
    /// The parent the record has once the operation is done, given the one it had.
    package func parent(after existing: Record?) -> String? {
        parent ?? ((type.replacesFields || clearsParent) ? nil : existing?.parent)
    }
}

/// What one operation did.
public enum OperationResult: Sendable {
    case saved(Record)
    /// A record deleted, with the records its deletion removed through DELETE_SELF
    /// references (in the order they went).
    case deleted(recordName: String, zoneID: ZoneID, cascaded: [String] = [])
    case failed(CloudKitError)

    public var error: CloudKitError? { if case .failed(let e) = self { return e }; return nil }
}

/// Limits CloudKit enforces (reference §6).
public enum Limits {
    /// Operations (or items looked up) one Web Services request holds (CloudKit's "Data Size
    /// Limits": 200 a request; the native framework's own batches may hold 400).
    public static let operationsPerBatch = 200
    public static let recordBytes = 1_000_000
    public static let fieldsPerRecord = 256
    public static let deleteSelfReferencesPerTarget = 750
    public static let resultsPerPage = 200
    /// A request's body, assets excluded (reference §6: 2 MB per request): what `ck serve`
    /// admits and what a command reads from stdin for one request.
    public static let requestBytes = 2_000_000
    /// Participants of one share, its owner included (CKShare: "up to 100 participants").
    public static let participantsPerShare = 100
}

extension RecordOperation {
    /// The record limits that can be checked before the operation runs: field count and size.
    public func checkLimits() throws {
        let name = recordName ?? ""
        if fields.count > Limits.fieldsPerRecord {
            throw CloudKitError(.limitExceeded, "record '\(name)' has \(fields.count) fields; the limit is \(Limits.fieldsPerRecord)", recordName: recordName)
        }
        var size = name.utf8.count + (recordType?.utf8.count ?? 0)
        for (k, v) in fields { if let v = v { size += k.utf8.count + v.storedSize } }
        if size > Limits.recordBytes {
            throw CloudKitError(.limitExceeded, "record too large: '\(name)' holds \(size) bytes; the limit is \(Limits.recordBytes) (assets excluded)", recordName: recordName)
        }
    }
}

extension Limits {
    /// A request of `count` items (operations, lookups) within the limit, or `tooManyItems`.
    public static func checkItems(_ count: Int) throws {
        if count > operationsPerBatch { throw tooManyItems(count) }
    }

    /// LIMIT_EXCEEDED for a request of `count` items, over `operationsPerBatch`, in CloudKit's
    /// words, with the way out: split the request.
    public static func tooManyItems(_ count: Int) -> CloudKitError {
        CloudKitError(.limitExceeded, "Your request contains \(count) items which is more than the maximum number of items in a single request (\(operationsPerBatch))")
            .with(.splitRequest(maxOperations: operationsPerBatch))
    }
}
