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
/// - else each type's changes since become a new delta on top of its runs — merged with the
///   deltas below it while they are no more than `levelRatio` times its size, and into a new
///   base when that reaches the base's eighth. Like a log-structured merge tree's levels: each
///   change is rewritten once per level, and there are log₄ of the zone's size levels, so a
///   commit's share of the upkeep grows with the logarithm of the zone, never with the zone.
/// A type whose runs are missing or stale in shape (a field indexed since), and a zone without
/// a catalog, are built again from the record files. Every run is a new file renamed into place.
enum IndexPolicy {
    /// History entries a reader may have to replay before the runs are brought forward.
    static let deltaEntries: Int64 = 256
    /// Past this many entries to bring forward, the record files are read instead.
    static let replayLimit: Int64 = 20_000
    /// Past this many entries behind, a zone's count is not given (ZoneIndex.recordCounts):
    /// what a count may cost. Upkeep leaves fewer than `deltaEntries`; a server's groups not
    /// yet published (UnpublishedCommits) may add a few hundred more.
    static let countReplayLimit: Int64 = 4 * deltaEntries
    /// A delta is merged into the one below it once it holds a quarter of that one's lines.
    static let levelRatio: Int64 = 4

    static func mergesIntoBase(delta: Int64, base: Int64) -> Bool { delta > max(64, base / 8) }

    /// Which levels a new delta of `changes` lines replaces, given the deltas' line counts
    /// (oldest first): it is written at the returned level (1-based; `deltas.count + 1` when
    /// on top of them all), taking in every delta from that level up; 0 when everything is
    /// merged into a new base.
    static func level(changes: Int64, deltas: [Int64], base: Int64) -> Int {
        var at = deltas.count
        var lines = changes
        while at > 0 && lines * levelRatio >= deltas[at - 1] {
            at -= 1
            lines += deltas[at]
        }
        // Never past the deltas a reader reads (4^29 lines away: a bound, not a case).
        return at == 0 && mergesIntoBase(delta: lines, base: base) ? 0 : min(at + 1, ZoneIndex.mostLevels)
    }
}

extension ZoneIndex {
    struct Catalog {
        package var seq: Int64
        package var types: [String]
        /// How many records of each type the zone holds at `seq` (a type without records: 0 or
        /// absent); nil in a catalog written before counts were kept.
        package var counts: [NameKey: Int64]?
    }

    func readCatalog() -> Catalog? {
        // Asked after every commit: kept while the file is the same (StampedFiles).
        guard let j = try? StampedFiles.shared.readJSON(directory + "/" + ZoneIndex.catalogName),
              j["schemaVersion"]?.int64Value == FileFormat.schemaVersion, j["incarnation"]?.stringValue == zone.incarnation,
              let seq = j["seq"]?.int64Value, seq >= 0, let types = j["types"]?.arrayValue else { return nil }
        var counts: [NameKey: Int64]?
        if let o = j["counts"]?.objectValue {
            // A zone holds at most as many records as its history has entries (each record was
            // made by one): counts that are not whole numbers, or that add up to more, are none.
            var c: [NameKey: Int64] = [:]
            var total: Int64 = 0
            for (t, n) in o {
                guard let n = n.int64Value, n >= 0, n <= seq - total else { c = [:]; total = -1; break }
                c[NameKey(t)] = n
                total += n
            }
            counts = total < 0 ? nil : c
        }
        return Catalog(seq: seq, types: types.compactMap(\.stringValue), counts: counts)
    }

    private func writeCatalog(_ c: Catalog) throws {
        var doc: [String: JSONValue] = ["schemaVersion": .int(FileFormat.schemaVersion), "incarnation": .string(zone.incarnation),
                                        "seq": .int(c.seq), "types": .array(c.types.sorted { NameKey($0) < NameKey($1) }.map(JSONValue.string))]
        if let counts = c.counts {
            var o: [String: JSONValue] = [:]
            for (t, n) in counts where n > 0 { o[t.string] = .int(n) }
            doc["counts"] = .object(o)
        }
        try Directory.open(directory, create: true)!.writeJSON(ZoneIndex.catalogName, .object(doc), durable: false)
    }

    /// Whether the runs are far enough behind `head` to be brought forward now.
    func isDue(head: Int64) -> Bool {
        guard let c = readCatalog() else { return true }
        // A catalog from before counts were kept gets them at the next commit.
        return head - c.seq >= IndexPolicy.deltaEntries || c.seq > head || c.counts == nil
    }

    /// Brings every run up to `head` (see IndexPolicy), and the catalog's counts with them.
    /// `rebuild`: from the record files.
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
        for t in changes.byType.keys { types.insert(t) }
        var rebuild: [String] = []
        var counts: [NameKey: Int64] = [:]
        for tk in types.sorted() {
            let t = tk.string
            let fields = ZoneIndex.indexedFields(schema.types[t])
            let changed = changes.byType[tk] ?? [:]
            guard catalog.types.contains(where: { $0.sameBytes(t) }) else {
                // A type without records when the runs were last made: its runs are the changes.
                counts[tk] = try writeBase(type: t, fields: fields, seq: head, changed: changed)
                continue
            }
            guard let names = TypeRuns.open(self, type: t, field: nil), names.coveredThrough == catalog.seq,
                  fields.allSatisfy({ f in TypeRuns.open(self, type: t, field: f).map { $0.seqs == names.seqs } ?? false })
            else { rebuild.append(t); continue }
            if let base = try advance(type: t, fields: fields, names: names, changed: changed, head: head) {
                counts[tk] = base
            } else if let before = catalog.counts {
                counts[tk] = (before[tk] ?? 0) + (changes.countChange[tk] ?? 0)
            } else if let runs = TypeRuns.open(self, type: t, field: nil) {
                // A catalog from before counts were kept: counted once, from the runs just written.
                counts[tk] = runs.liveNames()
            } else {
                rebuild.append(t)
            }
        }
        if !rebuild.isEmpty {
            for (t, n) in try buildFromRecordFiles(schema: schema, head: head, only: Set(rebuild.map(NameKey.init))) { counts[t] = n }
        }
        try removeRunsOfDroppedFields(schema: schema, types: types.map(\.string))
        // A count gone below zero means the catalog it came from lied (written by hand): none
        // is kept, and the next commit counts them again from the runs.
        try writeCatalog(Catalog(seq: head, types: types.map(\.string), counts: counts.values.allSatisfy { $0 >= 0 } ? counts : nil))
    }

    /// The records changed in (`after`, `head`]: by type, name → the record now (nil: deleted,
    /// or no longer of that type); and by how many each type's records grew (or shrank).
    struct Changes {
        var byType: [NameKey: [NameKey: Record?]] = [:]
        var countChange: [NameKey: Int64] = [:]
    }

    func changesSince(_ after: Int64, through head: Int64) throws -> Changes {
        var latest: [NameKey: Record?] = [:]
        // The type each changed record had at `after` (absent: it did not exist then). An
        // entry's `prev` is the version it replaced, so the first entry of a record that has
        // one found the record existing at `after`; a create has none.
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
        var out = Changes()
        for (k, r) in latest {
            if let r {
                out.byType[NameKey(r.recordType), default: [:]][k] = .some(r)
                out.countChange[NameKey(r.recordType), default: 0] += 1
            }
            if let t = typeBefore[k] {
                out.countChange[NameKey(t), default: 0] -= 1
                if r.map({ !$0.recordType.sameBytes(t) }) ?? true { out.byType[NameKey(t), default: [:]][k] = .some(nil) }
            }
        }
        return out
    }

    /// How many records of each type the zone holds at its history's head: the catalog's
    /// counts brought forward over the entries after it (fewer than `IndexPolicy.deltaEntries`
    /// while the indexes are kept, plus the commits not yet indexed), so it costs the same in a
    /// zone of any size. nil when the zone has no counts yet (no catalog, one from before counts
    /// were kept), or its runs are further behind than `countReplayLimit` (an import or a pull
    /// defers them to its end), until a commit makes them. Takes no lock: the catalog is read
    /// before the head, and a catalog is never ahead of the history.
    func recordCounts() throws -> [String: Int64]? {
        guard let catalog = readCatalog(), let counts = catalog.counts else { return nil }
        let head = try zone.history.head()
        guard catalog.seq <= head, head - catalog.seq <= IndexPolicy.countReplayLimit else { return nil }
        var now = counts
        if head > catalog.seq {
            guard let changes = try? changesSince(catalog.seq, through: head) else { return nil }
            for (t, d) in changes.countChange { now[t, default: 0] += d }
        }
        var out: [String: Int64] = [:]
        for (t, n) in now where n != 0 {
            // Counts that went below zero would mean a catalog that lies: say nothing.
            guard n > 0 else { return nil }
            out[t.string] = n
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

    /// Writes a type's runs from its changes alone; returns how many records its names hold.
    private func writeBase(type: String, fields: [String], seq: Int64, changed: [NameKey: Record?]) throws -> Int64 {
        var names: Int64 = 0
        for field in [nil] + fields.map(Optional.some) {
            let dir = try (field == nil ? typeDirectory(type, create: true) : fieldsDirectory(type, create: true))!
            let sorted = lines(changed, field: field).filter { !IndexKey.isTombstone($0[...]) }.sorted { $0.precedes($1) }
            let w = try IndexRunWriter(in: dir)
            for l in sorted { try w.add(l[...]) }
            try w.publish(as: ZoneIndex.runName(field: field, level: 0),
                          header: .init(recordType: type, field: field, seq: seq, base: nil, incarnation: zone.incarnation, count: 0, bytes: 0))
            if field == nil { names = w.count }
            try removeDeltas(in: dir, field: field, from: 1)
        }
        return names
    }

    /// Removes a field's deltas from `level` up (those above the run just written: a reader
    /// would stop at the first anyway, its `base` being the run replaced) — every one, even past
    /// a gap a crash in the middle of this left.
    private func removeDeltas(in dir: Directory, field: String?, from level: Int) throws {
        for e in try dir.entries() where ZoneIndex.isRun(e, of: field) && ZoneIndex.run(named: e)!.level >= max(1, level) {
            try dir.remove(e)
        }
    }

    /// One type's runs brought to `head`: the changes written as a new delta, merged with the
    /// deltas above the level IndexPolicy picks (and with the base, at level 0). A record's line
    /// in a newer run (or among the changes) hides its lines in older ones; a tombstone stays
    /// while there are runs below it to hide lines in. Returns how many records the type holds
    /// when its names were merged into a new base (which holds no tombstone), else nil.
    private func advance(type: String, fields: [String], names: TypeRuns, changed: [NameKey: Record?], head: Int64) throws -> Int64? {
        var baseNames: Int64?
        let level = IndexPolicy.level(changes: Int64(changed.count), deltas: names.deltas.map(\.header.count),
                                      base: names.base.header.count)
        for field in [nil] + fields.map(Optional.some) {
            let fieldRun = field != nil
            let runs = field == nil ? names : TypeRuns.open(self, type: type, field: field)!
            let dir = try (field == nil ? typeDirectory(type) : fieldsDirectory(type))!
            // Oldest first: the runs the new one takes in, then the changes.
            let merged: [IndexRun] = level == 0 ? runs.runs : Array(runs.deltas[(level - 1)...])
            var changes = lines(changed, field: field)
            changes.sort { $0.precedes($1) }
            // Each name's newest source (the changes are newest of all); the base is not read
            // for this, its lines only ever being hidden.
            var newest: [NameBytes: Int] = [:]
            for k in changed.keys { newest[NameBytes(IndexKey.hex(k.string)[...])] = merged.count }
            for (i, run) in merged.enumerated().reversed() where !(level == 0 && i == 0) {
                run.forEachLine { l in
                    let n = NameBytes(IndexKey.nameKey(ofLine: l, fieldRun: fieldRun))
                    if newest[n] == nil { newest[n] = i }
                    return true
                }
            }
            func kept(_ l: ArraySlice<UInt8>, from source: Int) -> Bool {
                if level == 0 && IndexKey.isTombstone(l) { return false }
                return (newest[NameBytes(IndexKey.nameKey(ofLine: l, fieldRun: fieldRun))] ?? 0) == source
            }
            let w = try IndexRunWriter(in: dir)
            try MergedRuns(runs: merged, overlay: changes, fieldRun: fieldRun).forEachSourced { line, from in
                if kept(line, from: from) { try w.add(line) }
                return true
            }
            let header = IndexRun.Header(recordType: type, field: field, seq: head,
                                         base: level == 0 ? nil : runs.seqs[level - 1],
                                         incarnation: zone.incarnation, count: 0, bytes: 0)
            try w.publish(as: ZoneIndex.runName(field: field, level: level), header: header)
            if field == nil && level == 0 { baseNames = w.count }
            try removeDeltas(in: dir, field: field, from: level + 1)
        }
        return baseNames
    }

    /// Runs of fields the schema no longer indexes are removed (they would go stale).
    private func removeRunsOfDroppedFields(schema: Schema, types: [String]) throws {
        for t in types {
            guard let dir = try fieldsDirectory(t) else { continue }
            let indexed = ZoneIndex.indexedFields(schema.types[t])
            for e in try dir.entries() where !e.hasPrefix(".") && !indexed.contains(where: { ZoneIndex.isRun(e, of: $0) }) { try dir.remove(e) }
        }
    }

    /// Every run made again from the record files, for the given types (nil: all, and runs of
    /// types without records removed): one pass over the files, each run sorted in memory one
    /// at a time from a spill file, so memory is that of the largest run.
    @discardableResult
    func buildFromRecordFiles(schema: Schema, head: Int64, only: Set<NameKey>? = nil) throws -> [NameKey: Int64] {
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
        return try writeRuns(from: spills, types: types, schema: schema, head: head, only: only)
    }

    /// Every run of `types` (or only of `only`, all of them even without records) from index
    /// lines gathered unsorted in `spills`; unless `only` is given, runs and directories of
    /// other types are removed and the catalog is written, at `head`. Returns how many records
    /// of each type built the runs hold (their names, repeats dropped).
    @discardableResult
    func writeRuns(from spills: IndexSpills, types: Set<NameKey>, schema: Schema, head: Int64, only: Set<NameKey>? = nil) throws -> [NameKey: Int64] {
        let root = try Directory.open(directory, create: true)!
        let built = only ?? types
        var counts: [NameKey: Int64] = [:]
        for tk in built.sorted() {
            let t = tk.string
            // A type with no records left gets empty runs.
            for field in [nil] + ZoneIndex.indexedFields(schema.types[t]).map(Optional.some) {
                let dir = try (field == nil ? typeDirectory(t, create: true) : fieldsDirectory(t, create: true))!
                let w = try IndexRunWriter(in: dir)
                try spills.sortedLines(type: t, field: field) { try w.add($0) }
                try w.publish(as: ZoneIndex.runName(field: field, level: 0),
                              header: .init(recordType: t, field: field, seq: head, base: nil, incarnation: zone.incarnation, count: 0, bytes: 0))
                if field == nil { counts[tk] = w.count }
                try removeDeltas(in: dir, field: field, from: 1)
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
            try writeCatalog(Catalog(seq: head, types: types.map(\.string), counts: counts))
        }
        return counts
    }
}
