import CKJSON
import CKModel

/// A query answered from a zone's indexes (ZoneIndex) instead of reading every record:
/// - in order: walk the index of the first sort (record names when there is none) from the
///   continuation marker's place, reading each record and keeping those that match, until a
///   page is full — O(page / selectivity + log n);
/// - by filter: take the names a filter's index range holds (`priority > 3`: the keys above
///   3), then read those records — O(matches + page).
/// The cheaper one by the runs' own counts is taken. Every candidate is checked against the
/// record as of the snapshot (type, indexed value, every filter, read permission), so a stale
/// index line is skipped, never returned. Nil when the indexes cannot answer (no runs for the
/// type, a sort by distance or by an unindexed field with no usable filter): the caller scans.
struct IndexedQuery {
    package let db: Database
    package let zone: ZoneStore
    package let req: QueryRequest
    package let after: [JSONValue]?
    package let limit: Int

    typealias Hit = (key: [JSONValue], record: Record)

    /// The run a query field is indexed in: nil for record names, "" for none.
    package static func runField(_ name: String) -> String? {
        guard let f = SystemField.named(name) else { return name }
        return f.runField
    }

    /// A range of lines: [lower, upper).
    package struct Range { var lower: [UInt8]; var upper: [UInt8] }

    package func run() throws -> [Hit]? {
        if QueryDebug.indexesOff { return nil }
        let index = ZoneIndex(zone: zone)
        let type = req.recordType
        // The runs are mapped before the snapshot is taken, so none is newer than it.
        guard let names = TypeRuns.open(index, type: type, field: nil) else { return nil }
        var fieldRuns: [String: TypeRuns] = [:]
        func runs(_ field: String?) -> TypeRuns? {
            guard let f = field else { return names }
            if f.isEmpty { return nil }
            if let r = fieldRuns[f] { return r }
            let r = TypeRuns.open(index, type: type, field: f)
            if let r { fieldRuns[f] = r }
            return r
        }
        for f in req.filters { _ = runs(IndexedQuery.runField(f.fieldName)) }
        if let s = req.sorts.first, s.relativeLocation == nil { _ = runs(IndexedQuery.runField(s.fieldName)) }
        let snapshot = try zone.snapshot()
        let used = [names] + Array(fieldRuns.values)
        guard used.allSatisfy({ $0.coveredThrough <= snapshot.head }) else { return nil }
        let from = used.map(\.coveredThrough).min()!
        // Runs far behind (a writer that stopped before bringing them forward): reading the
        // files costs less than replaying the history.
        guard snapshot.head - from <= IndexPolicy.replayLimit else { return nil }
        // A history compacted past the runs (`ck gc`) cannot bring them forward: read the records.
        guard let changed = try? changes(after: from, through: snapshot.head) else { return nil }
        func merged(_ field: String?) -> MergedRuns? {
            guard let r = runs(field) else { return nil }
            let lines = changed.map { rec in field.map { IndexKey.line(key: IndexKey.key(of: rec, field: $0), name: rec.recordName) } ?? IndexKey.hex(rec.recordName) }
            return MergedRuns(runs: r.runs, overlay: lines.sorted { $0.precedes($1) }, fieldRun: field != nil)
        }

        let total = max(1.0, Double(names.count) + Double(changed.count))
        // Each usable filter range, with its estimated size.
        var best: (field: String?, index: MergedRuns, ranges: [Range], size: Double)?
        for f in req.filters {
            let field = IndexedQuery.runField(f.fieldName)
            guard let m = merged(field), let ranges = IndexedQuery.ranges(f, fieldRun: field != nil) else { continue }
            let size = ranges.reduce(0.0) { $0 + m.estimate(from: $1.lower, to: $1.upper) }
            if best == nil || size < best!.size { best = (field, m, ranges, size) }
        }
        // The order source: the first sort's index (record names when unsorted).
        var order: (field: String?, index: MergedRuns)?
        if let s = req.sorts.first {
            let f = IndexedQuery.runField(s.fieldName)
            // Record names are walked upwards only; a descending name sort reads by filter or scans.
            if s.relativeLocation == nil, f != nil || s.ascending, let m = merged(f) { order = (f, m) }
        } else {
            order = (nil, merged(nil)!)
        }
        var ctx = Verifier(db: db, snapshot: snapshot, req: req, after: after)
        func show(_ f: String?) -> String { f ?? "recordName" }
        // Unsorted (name order) by a filter whose range holds few keys: each key's lines are in
        // name order, so merging them from the marker reads about a page of matching records.
        if req.sorts.isEmpty, let b = best, let groups = try IndexedQuery.keyGroups(b.index, b.ranges, fieldRun: b.field != nil) {
            QueryDebug.trace?("by filter index \(show(b.field)), \(groups.count) keys merged in name order")
            ctx.firstBatch = limit + 9
            return try byKeyGroups(b.index, groups, fieldRun: b.field != nil, ctx)
        }
        let page = Double(limit + 1)
        let selectivity = max(best.map { $0.size / total } ?? 1, 1 / total)
        let orderCost = order.map { _ in page / selectivity }
        // An index line costs about a hundredth of a record read (open, parse, check).
        let filterCost = best.map { req.sorts.isEmpty ? $0.size * 0.01 + page : $0.size }
        let useFilter: Bool
        switch (orderCost, filterCost) {
        case (let o?, let f?): useFilter = f < o
        case (nil, _?): useFilter = true
        case (_?, nil): useFilter = false
        case (nil, nil): return nil
        }
        if useFilter, let b = best {
            QueryDebug.trace?("by filter index \(show(b.field)) (about \(Int(b.size)) of \(Int(total)))")
            // Nearly every candidate matches: the first batch read is about a page.
            ctx.firstBatch = limit + 9
            return try byFilter(b.index, b.ranges, fieldRun: b.field != nil, ctx)
        }
        QueryDebug.trace?("in order of index \(show(order!.field))")
        // The walk reads about a page over the filters' selectivity: read that much at once.
        ctx.firstBatch = Int(min(4096, page / selectivity * 1.1)) + 8
        return try inOrder(order!.index, field: order!.field, ctx)
    }

    /// The records of the type changed after `from` (up to the snapshot), as they are now.
    private func changes(after from: Int64, through head: Int64) throws -> [Record] {
        guard from < head else { return [] }
        var latest: [NameKey: Record?] = [:]
        try zone.history.forEachEntry(after: from, through: head) { e in
            latest[e.key] = .some(e.record)
            return true
        }
        return latest.values.compactMap { $0 }.filter { $0.recordType.sameBytes(req.recordType) }
    }

    /// Checks candidates against the records as of the snapshot.
    struct Verifier {
        package let db: Database
        package let snapshot: ZoneSnapshot
        package let req: QueryRequest
        package let after: [JSONValue]?

        /// The record a line stands for, if it matches the query and is past the marker.
        /// `record`: the one the line names, as of the snapshot (RecordPrefetch read it).
        package func check(_ line: ArraySlice<UInt8>, field: String?, record: Record?) throws -> Hit? {
            guard let r = record, r.recordType.sameBytes(req.recordType) else { return nil }
            if let f = field, IndexKey.key(of: r, field: f)[...] != IndexKey.keyPart(line) { return nil }
            guard req.filters.allSatisfy({ QueryMatcher.matches(r, $0) }) else { return nil }
            if db.scope != .private, try !db.canRead(r) { return nil }
            let key = QueryEngine.key(r, req.sorts)
            if let a = after, QueryEngine.compare(key, a, req.sorts) <= 0 { return nil }
            return (key, r)
        }

        /// The records the plan expects to read for a page (RecordPrefetch's first batch).
        var firstBatch = 32

        func prefetch(_ field: String?) -> RecordPrefetch { RecordPrefetch(snapshot: snapshot, fieldRun: field != nil, firstBatch: firstBatch) }

        /// The hits among the lines in [lower, upper), in order, until `body` returns false.
        package func each(_ index: MergedRuns, from lower: [UInt8], to upper: [UInt8], field: String?, _ body: (Hit) throws -> Bool) throws {
            func take(_ line: ArraySlice<UInt8>, _ record: Record?) throws -> Bool {
                guard let h = try check(line, field: field, record: record) else { return true }
                return try body(h)
            }
            var p = prefetch(field)
            try index.forEach(from: lower, to: upper) { try p.add($0, take) }
            try p.flush(take)
        }
    }

    /// Walks the order index from the marker; groups of equal keys are sorted by the full key
    /// (later sorts, then record name) before they are taken.
    private func inOrder(_ index: MergedRuns, field: String?, _ v: Verifier) throws -> [Hit] {
        var out: [Hit] = []
        let ascending = req.sorts.first?.ascending ?? true
        let simple = req.sorts.count <= 1
        func take(_ group: [Hit]) {
            out.append(contentsOf: simple && ascending ? group : group.sorted { QueryEngine.compare($0.key, $1.key, req.sorts) < 0 })
        }
        // Where the marker puts the walk.
        let startKey: [UInt8] = after.map { a in
            let k = field == nil ? [] : IndexKey.key(a[0])
            return field == nil ? IndexKey.hex(a.last?.stringValue ?? "") : (simple ? IndexKey.line(key: k, name: a.last?.stringValue ?? "") : k)
        } ?? []
        if field == nil || ascending {
            // Ascending: one pass (missing values come last, as in the query order).
            var group: [Hit] = []
            var groupKey: ArraySlice<UInt8>?
            func each(_ line: ArraySlice<UInt8>, _ record: Record?) throws -> Bool {
                let k = field == nil ? line : IndexKey.keyPart(line)
                if !simple, groupKey != k {
                    take(group); group = []; groupKey = k
                    if out.count > limit { return false }
                }
                if let h = try v.check(line, field: field, record: record) {
                    if simple { out.append(h); return out.count <= limit }
                    group.append(h)
                }
                return true
            }
            var prefetch = v.prefetch(field)
            try index.forEach(from: startKey, to: nil) { try prefetch.add($0, each) }
            try prefetch.flush(each)
            take(group)
        } else {
            // Descending: present values from the largest down, each group read upwards, then
            // the records without a value.
            let kindEnd: [UInt8] = [IndexKey.missing]
            var bound: [UInt8]
            if let a = after, !a[0].isNull {
                let k = IndexKey.key(a[0])
                var group: [Hit] = []
                try v.each(index, from: k + [IndexKey.space], to: k + [0x21], field: field) { h in group.append(h); return true }
                take(group)
                bound = k
            } else {
                bound = after == nil ? kindEnd : []
            }
            while out.count <= limit, !bound.isEmpty, let prev = index.lastLine(below: bound) {
                let k = Array(IndexKey.keyPart(prev))
                var group: [Hit] = []
                try v.each(index, from: k + [IndexKey.space], to: k + [0x21], field: field) { h in
                    group.append(h)
                    return !(simple && group.count > limit - out.count)
                }
                take(group)
                bound = k
            }
            if out.count <= limit {
                var group: [Hit] = []
                try v.each(index, from: kindEnd, to: [IndexKey.tombstone], field: field) { h in
                    group.append(h)
                    return !(simple && group.count > limit - out.count)
                }
                take(group)
            }
        }
        out.sort { QueryEngine.compare($0.key, $1.key, req.sorts) < 0 }
        return Array(out.prefix(limit + 1))
    }

    /// The records in a filter's index ranges: by name when unsorted (only a page of them
    /// read), else all read and the best page kept.
    private func byFilter(_ index: MergedRuns, _ ranges: [Range], fieldRun: Bool, _ v: Verifier) throws -> [Hit] {
        func hexName(_ l: ArraySlice<UInt8>) -> ArraySlice<UInt8> { IndexKey.hexName(ofLine: l, fieldRun: fieldRun) }
        if req.sorts.isEmpty {
            // The names past the marker, in name order, each once; read until the page is full.
            let start = after.map { IndexKey.hex($0.last?.stringValue ?? "") }
            var names: [[UInt8]] = []
            for r in ranges {
                try index.forEach(from: r.lower, to: r.upper) { l in
                    let n = hexName(l)
                    if start.map({ $0.precedes(n) }) ?? true { names.append(Array(n)) }
                    return true
                }
            }
            names.sort { $0.precedes($1) }
            var out: [Hit] = []
            var prefetch = v.prefetch(nil)
            _ = try readInNameOrder(names, through: nil, &prefetch, v, into: &out)
            return out
        }
        var lines: [[UInt8]] = []
        for r in ranges {
            try index.forEach(from: r.lower, to: r.upper) { lines.append(Array($0)); return true }
        }
        var best: [Hit] = []
        var seen = Set<[UInt8]>()
        func each(_ line: ArraySlice<UInt8>, _ record: Record?) throws -> Bool {
            if let h = try v.check(line, field: nil, record: record) { QueryEngine.insert(h, into: &best, limit: limit, sorts: req.sorts) }
            return true
        }
        var prefetch = v.prefetch(nil)
        for l in lines {
            let name = Array(hexName(l[...]))
            guard seen.insert(name).inserted else { continue }
            _ = try prefetch.add(name[...], each)
        }
        try prefetch.flush(each)
        return best
    }

    /// One key's lines of a filter's range: `prefix` (the key and a space in a field run,
    /// nothing in the names run) comes before each name.
    struct KeyGroup { var prefix: [UInt8]; var range: Range }

    /// Most keys a filter's range may hold for its lines to be merged in name order
    /// (`byKeyGroups`): each costs a bisection of the runs per round.
    static let keyGroupLimit = 64

    /// The filter's ranges cut into one range per key (a field run's lines of one key are in
    /// name order; a names-run range is one already), or nil when they hold more than
    /// `keyGroupLimit` keys. Found by bisection, one key at a time.
    static func keyGroups(_ index: MergedRuns, _ ranges: [Range], fieldRun: Bool) throws -> [KeyGroup]? {
        guard fieldRun else { return ranges.count <= keyGroupLimit ? ranges.map { KeyGroup(prefix: [], range: $0) } : nil }
        var out: [KeyGroup] = []
        for r in ranges {
            var lower = r.lower
            while true {
                var key: [UInt8]?
                try index.forEach(from: lower, to: r.upper) { key = Array(IndexKey.keyPart($0)); return false }
                guard let k = key else { break }
                let below = k + [IndexKey.space], past = k + [0x21]
                out.append(KeyGroup(prefix: below, range: Range(lower: r.lower.precedes(below) ? below : r.lower,
                                                                upper: r.upper.precedes(past) ? r.upper : past)))
                if out.count > keyGroupLimit { return nil }
                lower = past
            }
        }
        return out
    }

    /// An unsorted query's page from per-key ranges: each range's names past the marker (a
    /// round takes a page and a little from each), merged in name order and read until the page
    /// is full. A round's names are complete up to the smallest last name of the ranges it cut
    /// short; past it, the next round takes twice as many. O(keys × log n + page).
    private func byKeyGroups(_ index: MergedRuns, _ groups: [KeyGroup], fieldRun: Bool, _ v: Verifier) throws -> [Hit] {
        var start: [UInt8]? = after.map { IndexKey.hex($0.last?.stringValue ?? "") }
        var take = limit + 9
        var out: [Hit] = []
        var prefetch = v.prefetch(nil)
        while true {
            var names: [[UInt8]] = []
            var bound: [UInt8]?
            for g in groups {
                var lower = g.range.lower
                if let s = start {
                    // The group's lines of names after `s` (and not `s` itself).
                    let past = g.prefix + s + [0x00]
                    if lower.precedes(past) { lower = past }
                }
                var n = 0
                try index.forEach(from: lower, to: g.range.upper) { l in
                    let name = Array(IndexKey.hexName(ofLine: l, fieldRun: fieldRun))
                    names.append(name)
                    n += 1
                    guard n < take else {
                        if bound == nil || name.precedes(bound!) { bound = name }
                        return false
                    }
                    return true
                }
            }
            names.sort { $0.precedes($1) }
            if try readInNameOrder(names, through: bound, &prefetch, v, into: &out) { return out }
            guard let b = bound else { return out }
            start = b
            take *= 2
        }
    }

    /// Reads the records of `names` (hex, sorted; repeats skipped; none after `bound`) and keeps
    /// those that match in `out`, in name order; true once the page is full.
    private func readInNameOrder(_ names: [[UInt8]], through bound: [UInt8]?, _ prefetch: inout RecordPrefetch, _ v: Verifier, into out: inout [Hit]) throws -> Bool {
        func each(_ line: ArraySlice<UInt8>, _ record: Record?) throws -> Bool {
            guard let h = try v.check(line, field: nil, record: record) else { return true }
            out.append(h)
            return out.count <= limit
        }
        var previous: [UInt8]?
        for name in names where name != previous {
            if let b = bound, b.precedes(name) { break }
            previous = name
            // The names run's line for a record is its name in hex.
            if try !prefetch.add(name[...], each) { return true }
        }
        try prefetch.flush(each)
        return out.count > limit
    }

    /// The index ranges a filter's matches lie in; nil when its index cannot narrow it (text
    /// equality ignores case, so it is checked on the records instead).
    package static func ranges(_ f: QueryFilter, fieldRun: Bool) -> [Range]? {
        let values: [JSONValue]
        switch f.comparator {
        case .in: values = f.value.value.arrayValue ?? []
        case .equals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .beginsWith: values = [f.value.value]
        default: return nil
        }
        var out: [Range] = []
        for v in values {
            guard let s = QueryMatcher.scalar(v) else { return nil }
            let isReference = v["recordName"] != nil || SystemField.named(f.fieldName) != nil
            var key: [UInt8]
            var kind: (lower: [UInt8], upper: [UInt8])
            switch s {
            case .number(let d):
                guard fieldRun else { return nil }
                key = IndexKey.number(d); kind = ([0x6E], [0x6F])
            case .text(let t):
                if (f.comparator == .equals || f.comparator == .in) && !isReference { return nil }
                if fieldRun { key = IndexKey.text(t); kind = ([0x74], [0x75]) } else { key = IndexKey.hex(t); kind = ([], [IndexKey.tombstone]) }
            }
            // In a field run a key's lines are "key name"; in the names run the line is the key.
            let below: [UInt8] = fieldRun ? key + [IndexKey.space] : key
            let through: [UInt8] = fieldRun ? key + [0x21] : key + [0x00]
            switch f.comparator {
            case .equals, .in: out.append(Range(lower: below, upper: through))
            case .lessThan: out.append(Range(lower: kind.lower, upper: below))
            case .lessThanOrEquals: out.append(Range(lower: kind.lower, upper: through))
            case .greaterThan: out.append(Range(lower: through, upper: kind.upper))
            case .greaterThanOrEquals: out.append(Range(lower: below, upper: kind.upper))
            case .beginsWith:
                guard case .text = s else { return nil }
                out.append(Range(lower: key, upper: key + [0x67]))
            default: return nil
            }
        }
        return out
    }
}
