import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeping a zone's indexes up to date, inside its commits (the caller holds the zone's lock and
/// the record files are current through `head`):
/// - fewer than `IndexPolicy.deltaEntries` history entries since the runs: nothing to do (readers
///   bring the runs forward from the history themselves);
/// - else each type's delta is rewritten with the changes since (O(delta));
/// - a delta grown past an eighth of its base is merged into a new base (one streaming pass).
/// A type whose runs are missing or stale in shape (a field indexed since), and a zone without
/// a catalog, are built again from the record files. Every run is a new file renamed into place.
enum IndexPolicy {
    /// History entries a reader may have to replay before the runs are brought forward.
    static let deltaEntries: Int64 = 256
    /// Past this many entries to bring forward, the record files are read instead.
    static let replayLimit: Int64 = 20_000

    static func mergesIntoBase(delta: Int64, base: Int64) -> Bool { delta > max(64, base / 8) }
}

extension ZoneIndex {
    struct Catalog {
        package var seq: Int64
        package var types: [String]
    }

    func readCatalog() -> Catalog? {
        // Asked after every commit: kept while the file is the same (StampedFiles).
        guard let j = try? StampedFiles.shared.readJSON(directory + "/" + ZoneIndex.catalogName),
              j["schemaVersion"]?.int64Value == FileFormat.schemaVersion, j["incarnation"]?.stringValue == zone.incarnation,
              let seq = j["seq"]?.int64Value, let types = j["types"]?.arrayValue else { return nil }
        return Catalog(seq: seq, types: types.compactMap(\.stringValue))
    }

    private func writeCatalog(_ c: Catalog) throws {
        let doc: JSONValue = ["schemaVersion": .int(FileFormat.schemaVersion), "incarnation": .string(zone.incarnation),
                              "seq": .int(c.seq), "types": .array(c.types.sorted { NameKey($0) < NameKey($1) }.map(JSONValue.string))]
        try Directory.open(directory, create: true)!.writeJSON(ZoneIndex.catalogName, doc, durable: false)
    }

    /// Whether the runs are far enough behind `head` to be brought forward now.
    func isDue(head: Int64) -> Bool {
        guard let c = readCatalog() else { return true }
        return head - c.seq >= IndexPolicy.deltaEntries || c.seq > head
    }

    /// Brings every run up to `head` (see IndexPolicy). `rebuild`: from the record files.
    func maintain(schema: Schema, head: Int64, rebuild: Bool = false) throws {
        guard !rebuild, let catalog = readCatalog(), catalog.seq <= head, head - catalog.seq <= IndexPolicy.replayLimit else {
            try buildFromRecordFiles(schema: schema, head: head)
            return
        }
        // A history compacted past the runs (`ck gc`): made again from the record files.
        guard let changes = try? changesSince(catalog.seq, through: head) else {
            try buildFromRecordFiles(schema: schema, head: head)
            return
        }
        var types = Set(catalog.types.map(NameKey.init))
        for t in changes.keys { types.insert(t) }
        var rebuild: [String] = []
        for tk in types.sorted() {
            let t = tk.string
            let fields = ZoneIndex.indexedFields(schema.types[t])
            let changed = changes[tk] ?? [:]
            guard catalog.types.contains(where: { $0.sameBytes(t) }) else {
                // A type without records when the runs were last made: its runs are the changes.
                try writeBase(type: t, fields: fields, seq: head, changed: changed)
                continue
            }
            guard let names = TypeRuns.open(self, type: t, field: nil), names.coveredThrough == catalog.seq,
                  fields.allSatisfy({ f in TypeRuns.open(self, type: t, field: f).map { $0.coveredThrough == catalog.seq && $0.base.header.seq == names.base.header.seq } ?? false })
            else { rebuild.append(t); continue }
            try advance(type: t, fields: fields, names: names, changed: changed, head: head)
        }
        if !rebuild.isEmpty { try buildFromRecordFiles(schema: schema, head: head, only: Set(rebuild.map(NameKey.init))) }
        try removeRunsOfDroppedFields(schema: schema, types: types.map(\.string))
        try writeCatalog(Catalog(seq: head, types: types.map(\.string)))
    }

    /// The records changed in (`after`, `head`], by type: name → the record now (nil: deleted,
    /// or no longer of that type).
    private func changesSince(_ after: Int64, through head: Int64) throws -> [NameKey: [NameKey: Record?]] {
        var latest: [NameKey: Record?] = [:]
        // The type each changed record had at `after` (absent: it did not exist then).
        var typeBefore: [NameKey: String] = [:]
        try zone.history.forEachEntry(after: after, through: head) { e in
            let k = e.key
            if latest[k] == nil, let p = e.prev, p <= after {
                // An update keeps its record's type; a delete's type is that of the version it ended.
                if let r = e.record { typeBefore[k] = r.recordType } else if let t = try zone.history.entry(p)?.record?.recordType { typeBefore[k] = t }
            }
            latest[k] = .some(e.record)
            return true
        }
        var out: [NameKey: [NameKey: Record?]] = [:]
        for (k, r) in latest {
            if let r { out[NameKey(r.recordType), default: [:]][k] = .some(r) }
            if let t = typeBefore[k], r.map({ !$0.recordType.sameBytes(t) }) ?? true { out[NameKey(t), default: [:]][k] = .some(nil) }
        }
        return out
    }

    /// The lines the changed records have in a run (tombstones for those gone).
    private func lines(_ changed: [NameKey: Record?], field: String?) -> [[UInt8]] {
        changed.map { k, r in
            guard let r else { return IndexKey.tombstoneLine(name: k.string, fieldRun: field != nil) }
            return field.map { IndexKey.line(key: IndexKey.key(of: r, field: $0), name: r.recordName) } ?? IndexKey.hex(r.recordName)
        }
    }

    private func writeBase(type: String, fields: [String], seq: Int64, changed: [NameKey: Record?]) throws {
        for field in [nil] + fields.map(Optional.some) {
            let dir = try (field == nil ? typeDirectory(type, create: true) : fieldsDirectory(type, create: true))!
            let sorted = lines(changed, field: field).filter { !IndexKey.isTombstone($0[...]) }.sorted { $0.lexicographicallyPrecedes($1) }
            let w = try IndexRunWriter(in: dir)
            for l in sorted { try w.add(l[...]) }
            try w.publish(as: ZoneIndex.runName(field: field, delta: false),
                          header: .init(recordType: type, field: field, seq: seq, base: nil, incarnation: zone.incarnation, count: 0, bytes: 0))
            try dir.remove(ZoneIndex.runName(field: field, delta: true))
        }
    }

    /// One type's runs brought to `head`: a new delta, or a new base when the delta has grown.
    private func advance(type: String, fields: [String], names: TypeRuns, changed: [NameKey: Record?], head: Int64) throws {
        // The names the delta will hold: its own, less those changed again, plus the changes.
        var deltaNames = Set<[UInt8]>()
        names.delta?.forEachLine { l in
            if let n = IndexKey.name(ofLine: l, fieldRun: false), changed[NameKey(n)] == nil { deltaNames.insert(Array(n.utf8)) }
            return true
        }
        let deltaCount = Int64(deltaNames.count + changed.count)
        let merge = IndexPolicy.mergesIntoBase(delta: deltaCount, base: names.base.header.count)
        var dropped = deltaNames
        for k in changed.keys { dropped.insert(k.bytes) }
        for field in [nil] + fields.map(Optional.some) {
            let runs = field == nil ? names : TypeRuns.open(self, type: type, field: field)!
            let dir = try (field == nil ? typeDirectory(type) : fieldsDirectory(type))!
            var newLines = lines(changed, field: field)
            runs.delta?.forEachLine { l in
                if let n = IndexKey.name(ofLine: l, fieldRun: field != nil), changed[NameKey(n)] == nil { newLines.append(Array(l)) }
                return true
            }
            newLines.sort { $0.lexicographicallyPrecedes($1) }
            let w = try IndexRunWriter(in: dir)
            if merge {
                // base − every name in the delta or changed now, merged with the delta's lines.
                var pending = newLines.filter { !IndexKey.isTombstone($0[...]) }[...]
                try runs.base.forEachLine { l in
                    if let n = IndexKey.name(ofLine: l, fieldRun: field != nil), dropped.contains(Array(n.utf8)) { return true }
                    while let p = pending.first, p.lexicographicallyPrecedes(l) { try w.add(p[...]); pending = pending.dropFirst() }
                    try w.add(l)
                    return true
                }
                for p in pending { try w.add(p[...]) }
                try w.publish(as: ZoneIndex.runName(field: field, delta: false),
                              header: .init(recordType: type, field: field, seq: head, base: nil, incarnation: zone.incarnation, count: 0, bytes: 0))
                try dir.remove(ZoneIndex.runName(field: field, delta: true))
            } else {
                for l in newLines { try w.add(l[...]) }
                try w.publish(as: ZoneIndex.runName(field: field, delta: true),
                              header: .init(recordType: type, field: field, seq: head, base: names.base.header.seq,
                                            incarnation: zone.incarnation, count: 0, bytes: 0))
            }
        }
    }

    /// Runs of fields the schema no longer indexes are removed (they would go stale).
    private func removeRunsOfDroppedFields(schema: Schema, types: [String]) throws {
        for t in types {
            guard let dir = try fieldsDirectory(t) else { continue }
            let keep = Set(ZoneIndex.indexedFields(schema.types[t]).flatMap { [ZoneIndex.runName(field: $0, delta: false), ZoneIndex.runName(field: $0, delta: true)] })
            for e in try dir.entries() where !keep.contains(e) && !e.hasPrefix(".") { try dir.remove(e) }
        }
    }

    /// Every run made again from the record files, for the given types (nil: all, and runs of
    /// types without records removed): one pass over the files, each run sorted in memory one
    /// at a time from a spill file, so memory is that of the largest run.
    func buildFromRecordFiles(schema: Schema, head: Int64, only: Set<NameKey>? = nil) throws {
        let root = try Directory.open(directory, create: true)!
        let spills = try IndexSpills(in: root)
        defer { spills.discard() }
        var types = Set<NameKey>()
        try zone.forEachRecordFile { r in
            let tk = NameKey(r.recordType)
            if let o = only, !o.contains(tk) { return true }
            types.insert(tk)
            try spills.add(type: r.recordType, field: nil, IndexKey.hex(r.recordName))
            for f in ZoneIndex.indexedFields(schema.types[r.recordType]) {
                try spills.add(type: r.recordType, field: f, IndexKey.line(key: IndexKey.key(of: r, field: f), name: r.recordName))
            }
            return true
        }
        try writeRuns(from: spills, types: types, schema: schema, head: head, only: only)
    }

    /// Every run of `types` (or only of `only`, all of them even without records) from index
    /// lines gathered unsorted in `spills`; unless `only` is given, runs and directories of
    /// other types are removed and the catalog is written, at `head`.
    func writeRuns(from spills: IndexSpills, types: Set<NameKey>, schema: Schema, head: Int64, only: Set<NameKey>? = nil) throws {
        let root = try Directory.open(directory, create: true)!
        let built = only ?? types
        for tk in built.sorted() {
            let t = tk.string
            // A type with no records left gets empty runs.
            for field in [nil] + ZoneIndex.indexedFields(schema.types[t]).map(Optional.some) {
                let dir = try (field == nil ? typeDirectory(t, create: true) : fieldsDirectory(t, create: true))!
                let w = try IndexRunWriter(in: dir)
                try spills.sortedLines(type: t, field: field) { try w.add($0) }
                try w.publish(as: ZoneIndex.runName(field: field, delta: false),
                              header: .init(recordType: t, field: field, seq: head, base: nil, incarnation: zone.incarnation, count: 0, bytes: 0))
                try dir.remove(ZoneIndex.runName(field: field, delta: true))
            }
        }
        if only == nil {
            // Directories of types that have no records any more, and anything else left here.
            let keepDirs = Set(types.map { PathEncoding.component($0.string) })
            for e in try root.entries() where e != ZoneIndex.catalogName && !keepDirs.contains(e) {
                // Spill directories of builds still running in another process stay.
                if let pid = FileSystem.temporaryOwner(e), pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH { continue }
                try root.removeTree(e)
            }
            try removeRunsOfDroppedFields(schema: schema, types: types.map(\.string))
            try writeCatalog(Catalog(seq: head, types: types.map(\.string)))
        }
    }
}
