import CKModel
import CKStore

/// ck's way to add an index to a field of the development schema (`ck schema index add`), the
/// change the CloudKit console makes when a field is ticked QUERYABLE, SORTABLE or SEARCHABLE:
/// without exporting, editing and importing the whole schema. Production gets it by a deploy.
public struct SchemaIndexRequest: Sendable {
    public var recordType: String
    /// The field by its schema name (`___recordID`) or, for a system field, its query name
    /// (`recordName`).
    public var fieldName: String
    public var indexes: [SchemaIndex]

    public init(recordType: String, fieldName: String, indexes: [SchemaIndex]) {
        self.recordType = recordType
        self.fieldName = fieldName
        self.indexes = indexes
    }
}

extension CloudKitAPI {
    /// Adds indexes to a field of a development record type (those it has stay). BAD_REQUEST,
    /// changing nothing, for a caller in production, an unknown type or field, or an index the
    /// field cannot have (bytes, assets and encrypted fields take none; a list is never
    /// SORTABLE; only STRING fields are SEARCHABLE). Answers `{recordType, field, type,
    /// queryable, searchable, sortable, added, ckdb}` — `ckdb` the field's line as the schema
    /// now has it.
    public func addSchemaIndexes(_ r: SchemaIndexRequest, as caller: Caller) throws -> DocumentBody {
        let admin = try schemaAdmin(caller)
        guard caller.environment == .development else {
            var e = CloudKitError.badRequest("indexes are added to the development schema, not \(caller.environment.rawValue); production gets them when the schema is deployed")
            e.nextStep = .deploySchema
            throw e
        }
        guard !r.indexes.isEmpty else { throw CloudKitError.badRequest("name at least one index to add: QUERYABLE, SORTABLE or SEARCHABLE") }
        let (field, added) = try admin.addIndexes(r.recordType, field: SchemaRules.schemaField(r.fieldName), r.indexes)
        return DocumentBody(["recordType": .string(r.recordType), "field": .string(field.name), "type": .string(field.type.description),
                             "queryable": .bool(field.queryable), "searchable": .bool(field.searchable), "sortable": .bool(field.sortable),
                             "added": .array(added.map { .string($0.rawValue) }), "ckdb": .string(SchemaPrinter.fieldLine(field))])
    }
}

extension SchemaAdmin {
    /// Adds indexes to a field of the development schema under its lock; answers the field as
    /// it now is and the indexes it did not have.
    func addIndexes(_ typeName: String, field name: String, _ indexes: [SchemaIndex]) throws -> (FieldSchema, [SchemaIndex]) {
        let store = store(.development)
        return try store.withLock {
            var s = try store.load()
            guard var t = s.types[typeName] else {
                throw CloudKitError.badRequest("Did not find record type: \(typeName)").with(.defineRecordType(typeName))
            }
            guard var f = t.fields[name] else {
                throw CloudKitError.badRequest("record type '\(typeName)' has no field '\(Names.describe(name))'; a field exists once a record saved in development has it, or a schema defines it")
            }
            var added: [SchemaIndex] = []
            for index in SchemaIndex.allCases where indexes.contains(index) {
                let need = IndexNeed(queryName: name, field: name, index: index, type: f.type, present: false)
                if let why = need.impossible {
                    throw CloudKitError.badRequest("field '\(Names.describe(name))' of record type '\(typeName)' cannot be \(index.rawValue): \(why)")
                }
                switch index {
                case .queryable: if !f.queryable { f.queryable = true; added.append(index) }
                case .searchable: if !f.searchable { f.searchable = true; added.append(index) }
                case .sortable: if !f.sortable { f.sortable = true; added.append(index) }
                }
            }
            if !added.isEmpty {
                t.fields[name] = f
                s.types[typeName] = t
                try store.save(s)
            }
            return (f, added)
        }
    }
}
