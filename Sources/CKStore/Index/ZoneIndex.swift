import CKModel

/// A zone's query indexes (`zones/<Z>/indexes/`), derived from its records and never the truth:
/// per record type `<type>/names.base` (its record names) and `<type>/fields/<field>.base`
/// (every record's key for a QUERYABLE or SORTABLE field of the schema, see IndexKey), each
/// with an optional `.delta` run: the records changed since the base was made. A run's header
/// says which history entry it is as of; a reader brings the runs up to its snapshot with the
/// history entries after that, and checks every candidate against the record itself, so a
/// stale, lost or damaged index costs time, never a wrong answer.
///
/// `catalog.json` lists the types the runs covered when last maintained: a type it does not
/// list had no records then, so its runs can be made from the history since alone.
package struct ZoneIndex {
    package let zone: ZoneStore
    package var directory: String { zone.directory + "/indexes" }
    static let catalogName = "catalog.json"

    /// The fields of a record type that get a run: QUERYABLE or SORTABLE scalar fields (system
    /// fields by their query names). Record names have their own run.
    static func indexedFields(_ t: RecordTypeSchema?) -> [String] {
        guard let t else { return [] }
        var out: [String] = []
        for (name, f) in t.fields where (f.queryable || f.sortable) && !f.type.isList && !f.type.encrypted {
            switch f.type.primitive {
            case .string, .int64, .double, .timestamp, .number, .reference: break
            default: continue
            }
            // A system field's run has its query name; record names have their own run.
            if name == "___etag" { continue }
            guard let f = SystemField.named(name) else { out.append(name); continue }
            if let run = f.runField, !run.isEmpty { out.append(run) }
        }
        return out.sorted()
    }

    static func runName(field: String?, delta: Bool) -> String {
        (field.map { PathEncoding.component($0) } ?? "names") + (delta ? ".delta" : ".base")
    }

    func typeDirectory(_ type: String, create: Bool = false) throws -> Directory? {
        guard let root = try Directory.open(directory, create: create) else { return nil }
        return try root.subdirectory(PathEncoding.component(type), create: create)
    }

    func fieldsDirectory(_ type: String, create: Bool = false) throws -> Directory? {
        try typeDirectory(type, create: create)?.subdirectory("fields", create: create)
    }
}

/// The runs of one record type as a reader maps them: a base and, when it extends that base,
/// a delta; `coveredThrough` is the history entry both are as of.
struct TypeRuns {
    package let recordType: String
    package let base: IndexRun
    package let delta: IndexRun?
    var coveredThrough: Int64 { delta?.header.seq ?? base.header.seq }
    package var count: Int64 { base.header.count + (delta?.header.count ?? 0) }

    /// The runs of a type's names (field nil) or of one field; nil when there is no usable run.
    static func open(_ index: ZoneIndex, type: String, field: String?) -> TypeRuns? {
        guard let dir = try? (field == nil ? index.typeDirectory(type) : index.fieldsDirectory(type)) else { return nil }
        guard let base = IndexRun.open(dir, ZoneIndex.runName(field: field, delta: false)),
              base.header.incarnation == index.zone.incarnation, base.header.recordType.sameBytes(type),
              base.header.field == field, base.header.base == nil else { return nil }
        var delta = IndexRun.open(dir, ZoneIndex.runName(field: field, delta: true))
        if let d = delta, d.header.base != base.header.seq || d.header.incarnation != index.zone.incarnation || d.header.field != field
            || !d.header.recordType.sameBytes(type) || d.header.seq < base.header.seq {
            delta = nil
        }
        return TypeRuns(recordType: type, base: base, delta: delta)
    }

    package var runs: [IndexRun] { [base] + (delta.map { [$0] } ?? []) }
}
