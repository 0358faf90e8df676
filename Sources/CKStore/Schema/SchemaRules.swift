import CKModel

/// What the schema decides: which saves it admits (defining fields just in time in
/// development, never in production), which queries it can answer (indexes), and what each
/// role may do with a record type's records in the public database (GRANTs).
package enum SchemaRules {
    static func typeMismatch(field: String, type: String, stored: SchemaType, given: String) -> CloudKitError {
        CloudKitError.badRequest("type mismatch for field '\(field)' in record type '\(type)': the schema has \(stored), the value is \(given)")
    }
}

/// The schema as one batch of writes sees it: the stored schema plus what the batch defines.
package final class SchemaContext {
    package let environment: Environment
    private(set) var schema: Schema
    /// Types and fields this batch defined just in time.
    private(set) var additions = Schema()

    package init(schema: Schema, environment: Environment) {
        self.schema = schema
        self.environment = environment
    }

    package var changed: Bool { !additions.types.isEmpty }

    /// Admits a record about to be saved, or throws CloudKit's refusal. All of a record's
    /// additions are made together, or none.
    package func admit(_ r: Record) throws {
        var type = schema.types[r.recordType]
        var added = additions.types[r.recordType]
        if type == nil {
            guard environment == .development else {
                throw CloudKitError(.badRequest, "Cannot create new type \(r.recordType) in production schema", recordName: r.recordName).with(.deploySchema)
            }
            type = RecordTypeSchema(name: r.recordType)
            added = RecordTypeSchema(name: r.recordType)
        }
        for (name, value) in r.fields.sorted(by: { $0.key < $1.key }) {
            if let f = type!.fields[name] {
                if !f.type.accepts(value.type) {
                    throw CloudKitError(.badRequest, "type mismatch for field '\(name)' in record type '\(r.recordType)': the schema has \(f.type), the value is \(value.type)", recordName: r.recordName)
                }
                continue
            }
            guard environment == .development else {
                throw CloudKitError(.badRequest, "Cannot create or modify field '\(name)' in record '\(r.recordType)' in production schema", recordName: r.recordName).with(.deploySchema)
            }
            guard let st = SchemaType(fieldType: value.type) else { continue }  // an empty list defines nothing yet
            let f = FieldSchema.justInTime(name: name, type: st)
            type!.fields[name] = f
            if added == nil { added = RecordTypeSchema(name: r.recordType, fields: [:], grants: [:]) }
            added!.fields[name] = f
        }
        schema.types[r.recordType] = type
        if let a = added { additions.types[r.recordType] = a }
    }
}

extension SchemaRules {
    /// The index a filter needs, by comparator.
    package static func index(for c: QueryComparator) -> IndexNeed.Index {
        switch c {
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: return .sortable
        case .containsAllTokens, .containsAnyTokens: return .searchable
        default: return .queryable
        }
    }

    /// The schema field a query field name stands for (system fields by their schema names).
    package static func schemaField(_ name: String) -> String {
        switch SystemField.named(name) {
        case .parent?, .share?, nil: return name
        case let f?: return f.schemaName
        }
    }

    /// What a user may do with records of a type in the public database.
    static func permits(_ p: RecordTypeSchema.Permission, type: RecordTypeSchema?, user: UserAccount?, roles: Set<String>, creator: String?) -> Bool {
        let grants = type?.grants ?? RecordTypeSchema.defaultGrants
        if grants["_world"]?.contains(p) == true { return true }
        guard let u = user else { return false }
        if grants["_icloud"]?.contains(p) == true { return true }
        if roles.contains(where: { grants[$0]?.contains(p) == true }) { return true }
        if grants["_creator"]?.contains(p) == true { return creator == nil || creator == u.userRecordName }
        return false
    }
}

extension SchemaRules {
    /// The user a public-database read is made as. The device's account status binds every
    /// user acting on it (`--as`, `CK_USER`): without an available account nobody is signed
    /// in, so only `_world` GRANTs apply — never `_icloud`, `_creator` or a custom role.
    package static func reader(_ caller: Principal) -> UserAccount? { caller.status == .available ? caller.user : nil }
}
