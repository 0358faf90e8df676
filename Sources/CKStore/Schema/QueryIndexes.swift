import CKModel

/// The indexes a query needs, as CloudKit checks them in development and production alike: the
/// record type must exist; a query without a filter needs `"___recordID" REFERENCE QUERYABLE`;
/// each filter the index of its comparator (QUERYABLE, SORTABLE for a range, SEARCHABLE for
/// tokens); each sort SORTABLE. Some fields take no index at all: bytes, assets and encrypted
/// fields are never indexed, and a list is never sortable.
package struct IndexNeed: Equatable, Sendable {
    package typealias Index = SchemaIndex

    /// The field as the query names it (`recordName`, `title`).
    package var queryName: String
    /// The field as the schema names it (`___recordID`, `title`).
    package var field: String
    package var index: Index
    /// The field's schema type; nil when the record type has no such field.
    package var type: SchemaType?
    /// Whether the schema has the index.
    package var present: Bool

    /// Why no schema can give the field this index, if none can.
    package var impossible: String? {
        guard let t = type else { return nil }
        if t.encrypted { return "an ENCRYPTED field cannot be indexed" }
        if t.primitive == .bytes || t.primitive == .asset { return "a \(t.isList ? "LIST<\(t.primitive.rawValue)>" : t.primitive.rawValue) field cannot be indexed" }
        if index == .sortable && t.isList { return "a LIST field cannot be sorted" }
        if index == .searchable && t.primitive != .string { return "only STRING fields can be SEARCHABLE" }
        return nil
    }

    /// CloudKit's words for the missing index (`Field 'recordName' is not marked queryable`),
    /// and why no index can help when none can.
    package var reason: String {
        let words = "Field '\(queryName)' is not marked \(index.rawValue.lowercased())"
        return impossible.map { "\(words): \($0)" } ?? words
    }

    package init(queryName: String, field: String, index: Index, type: SchemaType?, present: Bool) {
        self.queryName = queryName
        self.field = field
        self.index = index
        self.type = type
        self.present = present
    }
}

/// What the schema says of a query: the indexes it needs, the first one missing.
package struct QueryIndexes: Sendable {
    package let recordType: String
    /// nil when the schema has no such record type.
    package let type: RecordTypeSchema?
    package let needs: [IndexNeed]

    package init(_ req: QueryRequest, in schema: Schema) {
        recordType = req.recordType
        let t = schema.types[req.recordType]
        type = t
        var needs: [IndexNeed] = []
        func need(_ queryName: String, _ index: IndexNeed.Index) {
            let field = SchemaRules.schemaField(queryName)
            let f = t?.fields[field]
            let present: Bool
            switch index {
            case .queryable: present = f?.queryable == true
            case .searchable: present = f?.searchable == true
            case .sortable: present = f?.sortable == true
            }
            var n = IndexNeed(queryName: queryName, field: field, index: index, type: f?.type, present: present)
            if n.impossible != nil { n.present = false }
            if !needs.contains(n) { needs.append(n) }
        }
        if req.filters.isEmpty { need(SystemField.recordName.rawValue, .queryable) }
        for f in req.filters { need(f.fieldName, SchemaRules.index(for: f.comparator)) }
        for s in req.sorts { need(s.fieldName, .sortable) }
        self.needs = needs
    }

    /// CloudKit's refusal of the query, if it refuses it: an unknown record type, or the first
    /// index it lacks — with what the user can do next (add the index; define the type).
    package var refusal: CloudKitError? {
        guard type != nil else {
            return CloudKitError(.badRequest, "Did not find record type: \(recordType)").with(.defineRecordType(recordType))
        }
        guard let missing = needs.first(where: { !$0.present }) else { return nil }
        var e = CloudKitError(.badRequest, missing.reason)
        if missing.impossible == nil, let line = line(missing.field, adding: [missing.index]) {
            e.nextStep = .addIndex(recordType: recordType, field: missing.field, index: missing.index.rawValue, ckdbLine: line)
        }
        return e
    }

    /// A field's line in the record type's `.ckdb` with these indexes added to those it has
    /// (`"___recordID" REFERENCE QUERYABLE`); nil when the type has no such field.
    package func line(_ field: String, adding: Set<IndexNeed.Index>) -> String? {
        guard var f = type?.fields[field] else { return nil }
        if adding.contains(.queryable) { f.queryable = true }
        if adding.contains(.searchable) { f.searchable = true }
        if adding.contains(.sortable) { f.sortable = true }
        return SchemaPrinter.fieldLine(f)
    }
}
