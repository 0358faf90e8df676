/// An index a field of a record type can have, as a `.ckdb` schema names it.
public enum SchemaIndex: String, Sendable, CaseIterable {
    case queryable = "QUERYABLE", searchable = "SEARCHABLE", sortable = "SORTABLE"
}
