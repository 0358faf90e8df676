import CKModel

/// A zone's query indexes (`zones/<Z>/indexes/`), derived from its records and never the truth:
/// per record type `<type>/names.base` (its record names) and `<type>/fields/<field>.base`
/// (every record's key for a QUERYABLE or SORTABLE field of the schema, see IndexKey), each
/// with deltas (`.delta`, `.delta2`, …): the records changed since the run below was made. A run's header
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

    /// A run's file: level 0 is the base, 1 the first delta (`.delta`), n the n-th (`.delta<n>`).
    static func runName(field: String?, level: Int) -> String {
        let stem = field.map { PathEncoding.component($0) } ?? "names"
        switch level {
        case 0: return stem + ".base"
        case 1: return stem + ".delta"
        default: return stem + ".delta\(level)"
        }
    }

    /// The field stem and level of a run's file name (`priority.delta2`: `priority`, 2); nil for
    /// any other entry. The inverse of `runName`.
    static func run(named entry: String) -> (stem: Substring, level: Int)? {
        guard let dot = entry.lastIndex(of: "."), dot != entry.startIndex else { return nil }
        let stem = entry[..<dot], kind = entry[entry.index(after: dot)...]
        if kind == "base" { return (stem, 0) }
        guard kind.hasPrefix("delta") else { return nil }
        let number = kind.dropFirst(5)
        if number.isEmpty { return (stem, 1) }
        guard let level = Int(number), level >= 2, "\(level)" == number else { return nil }
        return (stem, level)
    }

    /// Whether a directory entry is a run (of any field and level).
    static func isRun(_ entry: String) -> Bool { run(named: entry) != nil }

    /// Whether a directory entry is one of a field's runs (nil: names), of any level.
    static func isRun(_ entry: String, of field: String?) -> Bool {
        run(named: entry)?.stem == (field.map { PathEncoding.component($0) } ?? "names")[...]
    }

    /// Deltas past this many levels are not read (each is a quarter of the one below, so a
    /// zone never has more than a dozen).
    static let mostLevels = 32

    func typeDirectory(_ type: String, create: Bool = false) throws -> Directory? {
        guard let root = try Directory.open(directory, create: create) else { return nil }
        return try root.subdirectory(PathEncoding.component(type), create: create)
    }

    func fieldsDirectory(_ type: String, create: Bool = false) throws -> Directory? {
        try typeDirectory(type, create: create)?.subdirectory("fields", create: create)
    }
}

/// The runs of one record type as a reader maps them: a base and the deltas that extend it,
/// each the records changed after the one below it; `coveredThrough` is the history entry the
/// newest is as of.
struct TypeRuns {
    package let recordType: String
    package let base: IndexRun
    /// Oldest first: each one's header names the `seq` of the run below it as its `base`.
    package let deltas: [IndexRun]
    var coveredThrough: Int64 { deltas.last?.header.seq ?? base.header.seq }
    package var count: Int64 { deltas.reduce(base.header.count) { $0 + $1.header.count } }
    /// What the runs are as of, level by level (every field's runs of a type match its names').
    var seqs: [Int64] { [base.header.seq] + deltas.map(\.header.seq) }

    /// The runs of a type's names (field nil) or of one field; nil when there is no usable run.
    /// The deltas are read up the chain while each extends the one below: a delta left from
    /// before a merge (its `base` a run since replaced) ends it.
    static func open(_ index: ZoneIndex, type: String, field: String?) -> TypeRuns? {
        guard let dir = try? (field == nil ? index.typeDirectory(type) : index.fieldsDirectory(type)) else { return nil }
        guard let base = IndexRun.open(dir, ZoneIndex.runName(field: field, level: 0)),
              base.header.incarnation == index.zone.incarnation, base.header.recordType.sameBytes(type),
              base.header.field == field, base.header.base == nil else { return nil }
        var deltas: [IndexRun] = []
        var below = base.header.seq
        for level in 1...ZoneIndex.mostLevels {
            guard let d = IndexRun.open(dir, ZoneIndex.runName(field: field, level: level)), d.header.base == below,
                  d.header.incarnation == index.zone.incarnation, d.header.field == field,
                  d.header.recordType.sameBytes(type), d.header.seq >= below else { break }
            deltas.append(d)
            below = d.header.seq
        }
        return TypeRuns(recordType: type, base: base, deltas: deltas)
    }

    package var runs: [IndexRun] { [base] + deltas }

    /// How many names the runs hold: each name as its newest run has it, a tombstone hiding
    /// it. Reads every run once; memory is that of the deltas' names.
    func liveNames() -> Int64 {
        var newest: [NameBytes: Bool] = [:]
        for d in deltas.reversed() {
            d.forEachLine { l in
                let n = NameBytes(IndexKey.nameKey(ofLine: l, fieldRun: false))
                if newest[n] == nil { newest[n] = !IndexKey.isTombstone(l) }
                return true
            }
        }
        var live = Int64(newest.values.filter { $0 }.count)
        base.forEachLine { l in
            if !IndexKey.isTombstone(l), newest[NameBytes(IndexKey.nameKey(ofLine: l, fieldRun: false))] == nil { live += 1 }
            return true
        }
        return live
    }
}
