import CKModel
import CKStore

/// `records/modify`: record operations applied to one zone, one result each, in order; in a
/// custom zone an atomic request applies all or nothing (Store/ModifyRecords.swift commits).
extension CloudKitAPI {
    public func modifyRecords(_ r: ModifyRequest, as caller: Caller) throws -> RecordsResponse {
        let zone = try r.zone(fallback: ZoneID.defaultZoneName)
        let ctx = try preflight(.recordsModify, caller, zones: [zone], need: .write)
        // A user's Users record is there before its user first saves to it.
        try ensureUserRecords(r.operations.filter { $0.type != .create }.compactMap(\.recordName), zone: zone, caller: caller)
        var assets = r.uploadedAssets
        if r.takesExportedAssets { ExportedAssets.collect(r.operations, store: store.assets, into: &assets) }
        let outcome = try ctx.db.modify(zone: zone, ModifyBatch(r.operations, atomic: r.atomic, assets: assets, options: ctx.options))
        var response = RecordsResponse(try outcome.results.map { try ctx.gate.admitWritten($0) }, shape: .modify, style: ctx.style.numbersAsStrings(r.numbersAsStrings),
                                       desiredKeys: r.desiredKeys)
        response.itemOptions = r.itemOptions
        response.definedFields = DefinedField.list(outcome.definedSchema)
        return response
    }
}

/// ck's delete of records by name (`record delete`): records/modify requests of `forceDelete`
/// (or `delete` with the tag), one per 200 names, each atomic in a custom zone as CloudKit's
/// default is. `ifExists`: a record that is not there counts as deleted and is left out.
public struct DeleteRecordsRequest: Sendable {
    public var recordNames: [String]
    public var zoneName: String
    /// `delete` with this recordChangeTag (one name); nil: `forceDelete`.
    public var recordChangeTag: String?
    public var ifExists: Bool

    public init(recordNames: [String], zoneName: String = ZoneID.defaultZoneName, recordChangeTag: String? = nil, ifExists: Bool = false) {
        self.recordNames = recordNames
        self.zoneName = zoneName
        self.recordChangeTag = recordChangeTag
        self.ifExists = ifExists
    }
}

extension CloudKitAPI {
    public func deleteRecords(_ r: DeleteRecordsRequest, as caller: Caller) throws -> RecordsResponse {
        for n in r.recordNames { try Names.validateRecordName(n) }
        if r.recordChangeTag != nil && r.recordNames.count != 1 { throw CloudKitError.badRequest("a delete with a recordChangeTag names one record") }
        let ctx = try preflight(.recordsModify, caller, zones: [r.zoneName], need: .write)
        var seen = Set<NameKey>()
        var names = r.recordNames.filter { seen.insert(NameKey($0)).inserted }
        let zone = try ctx.db.zone(r.zoneName)
        if r.ifExists {
            // Only what is there (and visible): a missing name must not fail an atomic batch.
            let snap = try zone.snapshot()
            names = try names.filter { n in try snap.record(named: n).map { try ctx.gate.canRead($0) } ?? false }
        }
        var results: [OperationResult] = []
        var start = 0
        while start < names.count {
            let chunk = names[start..<min(start + Limits.operationsPerBatch, names.count)]
            start += chunk.count
            let ops = chunk.map { RecordOperation(type: r.recordChangeTag == nil ? .forceDelete : .delete, recordName: $0, recordChangeTag: r.recordChangeTag) }
            results += try ctx.db.modify(zone: r.zoneName, ModifyBatch(Array(ops), options: ctx.options)).results.map { try ctx.gate.admitWritten($0) }
        }
        // Deleted meanwhile, or by a cascade of an earlier name: gone either way.
        if r.ifExists { results = results.filter { $0.error?.code != .notFound } }
        var response = RecordsResponse(results, shape: .modify, style: ctx.style)
        response.listsCascades = true
        return response
    }
}

/// The type a field's value takes when it is sent without one, and where that type comes from
/// (for messages): as CloudKit types a value sent without `type`.
public struct FieldTypeHint: Sendable {
    public var type: FieldType
    /// Where the type comes from, worded to follow a value's description: " in the schema of
    /// record type 'T'", " in record 'r'", " (a system field)".
    public var origin: String

    public init(type: FieldType, origin: String) {
        self.type = type
        self.origin = origin
    }
}

/// Which types untyped values of fields take (what `record save title=-5`, `--filter` and
/// `subscribe --filter` read their text as): for a filter, a system field's type; else the
/// schema's type for the field; else, for a save, the type the field has in the record being
/// changed. A field none knows is left out (the front end infers it).
public struct FieldTypeHintsRequest: Sendable {
    public var recordType: String?
    public var fieldNames: [String]
    /// The record a save changes (its fields' types count after the schema's).
    public var recordName: String?
    public var zoneName: String
    /// Filters name system fields (`createdTimestamp > …`); a save's fields are the record's own.
    public var forFilters: Bool

    public init(recordType: String?, fieldNames: [String], recordName: String? = nil, zoneName: String = ZoneID.defaultZoneName,
                forFilters: Bool = false) {
        self.recordType = recordType
        self.fieldNames = fieldNames
        self.recordName = recordName
        self.zoneName = zoneName
        self.forFilters = forFilters
    }
}

extension CloudKitAPI {
    public func fieldTypeHints(_ r: FieldTypeHintsRequest, as caller: Caller) throws -> [String: FieldTypeHint] {
        let ctx = try preflight(nil, caller, need: .none)
        var existing: Record?
        // Only a hint: a missing zone, or a record the caller cannot read, says nothing here
        // (the save reports it).
        if let n = r.recordName, let z = try? ctx.db.zone(r.zoneName), let rec = try? z.snapshot().record(named: n), (try? ctx.gate.canRead(rec)) == true {
            existing = rec
        }
        let recordType = r.recordType ?? existing?.recordType
        let schemaFields = try recordType.flatMap { try ctx.db.schema().types[$0]?.fields } ?? [:]
        var hints: [String: FieldTypeHint] = [:]
        for f in r.fieldNames {
            if r.forFilters, let t = SystemField.named(f)?.type {
                hints[f] = FieldTypeHint(type: t, origin: " (a system field)")
            } else if let t = schemaFields[f]?.type.fieldType, let rt = recordType {
                hints[f] = FieldTypeHint(type: t, origin: " in the schema of record type '\(rt)'")
            } else if let e = existing, e.recordType == recordType, let t = e.fields[f]?.type, t.base != .unknown {
                hints[f] = FieldTypeHint(type: t, origin: " in record '\(Names.describe(e.recordName))'")
            }
        }
        return hints
    }
}
