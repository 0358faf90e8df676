import CKModel

/// A container environment's schema, as CloudKit keeps it: record types with typed, indexed
/// fields and security grants, and custom roles (reference §8).
package struct Schema: Equatable, Sendable {
    package var roles: Set<String> = []
    package var types: [String: RecordTypeSchema] = [:]

    package init() {}

    /// The schema of a new container: only the `Users` type.
    static var initial: Schema {
        var s = Schema()
        s.types["Users"] = .users
        return s
    }
}

/// A schema field type: a primitive, possibly ENCRYPTED, or a LIST of one.
package struct SchemaType: Equatable, Hashable, Sendable, CustomStringConvertible {
    package enum Primitive: String, Sendable, CaseIterable {
        case asset = "ASSET", bytes = "BYTES", double = "DOUBLE", int64 = "INT64", location = "LOCATION"
        case number = "NUMBER", reference = "REFERENCE", string = "STRING", timestamp = "TIMESTAMP"
    }

    var primitive: Primitive
    package var isList = false
    package var encrypted = false
    /// For NUMBER: the type it is pinned to (`NUMBER PREFERRED AS INT64`).
    var preferred: Primitive?

    package init(_ p: Primitive, list: Bool = false, encrypted: Bool = false, preferred: Primitive? = nil) {
        primitive = p
        isList = list
        self.encrypted = encrypted
        self.preferred = preferred
    }

    /// The schema type a record field of this Web Services type defines (nil for an empty
    /// list, whose element type is unknown).
    package init?(fieldType t: FieldType) {
        let p: Primitive
        var encrypted = false
        switch t.base {
        case .string: p = .string
        case .int64: p = .int64
        case .double: p = .double
        case .timestamp: p = .timestamp
        case .bytes: p = .bytes
        case .encryptedBytes: p = .bytes; encrypted = true
        case .reference: p = .reference
        case .location: p = .location
        case .asset: p = .asset
        case .unknown: return nil
        }
        self.init(p, list: t.isList, encrypted: encrypted)
    }

    /// The Web Services type a value sent without `type` takes in a field of this schema type:
    /// ENCRYPTED_BYTES for an encrypted field; nil for a NUMBER not pinned to INT64 or DOUBLE.
    package var fieldType: FieldType? {
        if encrypted { return FieldType(.encryptedBytes, list: isList) }
        let base: FieldType.Base
        switch primitive {
        case .asset: base = .asset
        case .bytes: base = .bytes
        case .double: base = .double
        case .int64: base = .int64
        case .location: base = .location
        case .reference: base = .reference
        case .string: base = .string
        case .timestamp: base = .timestamp
        case .number:
            guard let p = preferred, p != .number else { return nil }
            return SchemaType(p, list: isList).fieldType
        }
        return FieldType(base, list: isList)
    }

    /// Whether a value of this Web Services type may be stored in a field of this schema type.
    package func accepts(_ t: FieldType) -> Bool {
        if t.base == .unknown { return t.isList == isList }
        guard let given = SchemaType(fieldType: t), given.isList == isList else { return false }
        // An encrypted field holds ciphertext, whatever its type in the clear.
        if encrypted || given.encrypted { return encrypted && given.encrypted }
        if primitive == .number { return given.primitive == (preferred ?? given.primitive) && (given.primitive == .int64 || given.primitive == .double) }
        return given.primitive == primitive
    }

    package var description: String {
        var base = primitive.rawValue
        if primitive == .number, let p = preferred { base += " PREFERRED AS " + p.rawValue }
        if encrypted { base = "ENCRYPTED " + base }
        return isList ? "LIST<\(base)>" : base
    }
}

/// One field of a record type, with its indexes.
package struct FieldSchema: Equatable, Sendable {
    package var name: String
    package var type: SchemaType
    package var queryable = false
    package var searchable = false
    package var sortable = false

    package init(name: String, type: SchemaType, queryable: Bool = false, searchable: Bool = false, sortable: Bool = false) {
        self.name = name
        self.type = type
        self.queryable = queryable
        self.searchable = searchable
        self.sortable = sortable
    }

    /// A field defined just in time by a development save, with the indexes CloudKit gives it:
    /// strings are queryable, searchable and sortable; numbers and dates queryable and
    /// sortable; references, locations and lists queryable; bytes and assets none.
    static func justInTime(name: String, type: SchemaType) -> FieldSchema {
        var f = FieldSchema(name: name, type: type)
        if type.isList {
            f.queryable = type.primitive != .asset && type.primitive != .bytes
            return f
        }
        switch type.primitive {
        case .string: f.queryable = true; f.searchable = true; f.sortable = true
        case .int64, .double, .timestamp, .number: f.queryable = true; f.sortable = true
        case .reference, .location: f.queryable = true
        case .bytes, .asset: break
        }
        return f
    }
}

/// A record type: its system and user fields, and who may do what with its records in the
/// public database.
package struct RecordTypeSchema: Equatable, Sendable {
    package enum Permission: String, Sendable, CaseIterable { case write = "WRITE", create = "CREATE", read = "READ" }

    static let systemFields: [(String, SchemaType)] = [
        (SystemField.createdTimestamp.schemaName, SchemaType(.timestamp)), (SystemField.createdUserRecordName.schemaName, SchemaType(.reference)),
        ("___etag", SchemaType(.string)),
        (SystemField.modifiedTimestamp.schemaName, SchemaType(.timestamp)), (SystemField.modifiedUserRecordName.schemaName, SchemaType(.reference)),
        (SystemField.recordName.schemaName, SchemaType(.reference)),
    ]
    static let defaultGrants: [String: Set<Permission>] = ["_creator": [.write], "_icloud": [.create], "_world": [.read]]

    package var name: String
    /// User fields and the system fields (which always exist; listing them sets their indexes).
    package var fields: [String: FieldSchema]
    /// Role → permissions.
    package var grants: [String: Set<Permission>]

    package init(name: String, fields: [String: FieldSchema] = [:], grants: [String: Set<Permission>] = RecordTypeSchema.defaultGrants) {
        self.name = name
        self.fields = fields
        self.grants = grants
        for (n, t) in RecordTypeSchema.systemFields where self.fields[n] == nil { self.fields[n] = FieldSchema(name: n, type: t) }
    }

    package static var users: RecordTypeSchema {
        var t = RecordTypeSchema(name: "Users", grants: ["_creator": [.write], "_world": [.read]])
        t.fields["___recordID"]?.queryable = true
        t.fields["roles"] = FieldSchema(name: "roles", type: SchemaType(.int64, list: true))
        return t
    }

    static func isSystemField(_ n: String) -> Bool { n.hasPrefix("___") }

    package var userFields: [FieldSchema] { fields.values.filter { !RecordTypeSchema.isSystemField($0.name) }.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) } }
    package var systemFieldList: [FieldSchema] { RecordTypeSchema.systemFields.compactMap { fields[$0.0] } }
}
