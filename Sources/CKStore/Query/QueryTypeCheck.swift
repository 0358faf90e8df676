import CKJSON
import CKModel

extension QueryFilter {
    /// Why this filter can never match, when its value is of another kind than the field's
    /// type in the schema (`priority > "abc"` on an INT64 field) — CloudKit refuses such a
    /// query instead of answering it with nothing. Nil when it can match, or when the schema
    /// does not know the field.
    func typeMismatch(recordType: String, schema: Schema) -> String? {
        let fieldKind: ValueKind
        let described: String
        if let s = SystemField.named(fieldName) {
            fieldKind = s.kind
            described = "the system field '\(fieldName)' is \(s.kind == .number ? "TIMESTAMP" : "REFERENCE")"
        } else if let t = schema.types[recordType]?.fields[fieldName]?.type {
            fieldKind = ValueKind(t)
            described = "field '\(fieldName)' is \(t) in the schema of record type '\(recordType)'"
        } else {
            return nil
        }
        let textOnly: Set<QueryComparator> = [.beginsWith, .notBeginsWith, .listMemberBeginsWith, .notListMemberBeginsWith, .containsAllTokens, .containsAnyTokens]
        if textOnly.contains(comparator) && fieldKind != .text {
            return "filter on '\(fieldName)': \(comparator.rawValue) needs a STRING field, but \(described)"
        }
        if comparator == .near && fieldKind != .location {
            return "filter on '\(fieldName)': NEAR needs a LOCATION field, but \(described)"
        }
        guard let valueKind = ValueKind(value.type), !valueKind.compares(with: fieldKind) else { return nil }
        let shown = JSONWriter.compact(value.value)
        return "filter on '\(fieldName)': \(described) but the value \(shown.count > 60 ? String(shown.prefix(60)) + "…" : shown) is \(value.type.element)"
    }
}

extension ValueKind {
    /// What a value of a schema field type compares as.
    package init(_ t: SchemaType) {
        if t.encrypted { self = .bytes; return }
        switch t.primitive {
        case .string: self = .text
        case .int64, .double, .timestamp, .number: self = .number
        case .bytes: self = .bytes
        case .reference: self = .reference
        case .location: self = .location
        case .asset: self = .asset
        }
    }
}
