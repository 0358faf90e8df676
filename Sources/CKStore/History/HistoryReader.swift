import CKJSON
import CKModel

/// Reading a zone's history as git reads commits: one change, the changes of a range, a
/// record as of a point, the zone as of a point, the difference between two points, and
/// which change last set each field. Everything reads the history itself, through its index:
/// a range of k changes costs O(k), one record as of a point costs that record's own history
/// (its `prev` chain), and nothing holds more than the records a range changed.

/// A change as `ck log`, `ck show`, `ck blame` and time travel read it: one entry of the
/// zone's history, read back typed.
package typealias HistoryChange = HistoryEntry

extension HistoryEntry {
    /// The change as `ck log` prints it.
    package func summary(zoneID: ZoneID) -> JSONValue {
        var o: [String: JSONValue] = [
            "seq": .int(seq), "timestamp": .int(timestamp), "operation": .string(op.rawValue), "recordName": .string(recordName),
            "userRecordName": .string(userRecordName), "deviceID": .string(deviceID), "zoneID": zoneID.json,
        ]
        if let t = recordChangeTag { o["recordChangeTag"] = .string(t) }
        if let r = record { o["recordType"] = .string(r.recordType) }
        if let p = prev { o["prev"] = .int(p) }
        return .object(o)
    }
}

/// A record at two points: before (nil: absent) and after (nil: absent).
package struct RecordDiff: Sendable {
    package var recordName: String
    package var before: Record?
    package var after: Record?

    package var status: String { before == nil ? "added" : (after == nil ? "deleted" : "changed") }

    /// Field by field, what differs: name → (old, new), each nil when the field is absent.
    package var fields: [(name: String, old: RecordField?, new: RecordField?)] {
        RecordDiff.fieldChanges(before, after)
    }

    package static func fieldChanges(_ a: Record?, _ b: Record?) -> [(name: String, old: RecordField?, new: RecordField?)] {
        let names = Set((a?.fields.keys).map(Array.init) ?? []).union((b?.fields.keys).map(Array.init) ?? [])
        return names.sorted { NameKey($0) < NameKey($1) }.compactMap { n in
            let o = a?.fields[n], v = b?.fields[n]
            return o == v ? nil : (n, o, v)
        }
    }

    /// Whether the two versions hold the same data (type, fields, parent).
    package var isNoChange: Bool {
        guard let a = before, let b = after else { return before == nil && after == nil }
        return a.recordType == b.recordType && a.fields == b.fields && a.parent == b.parent
    }

    /// `{name: {old, new}}`, a side absent when the field is.
    package static func fieldsJSON(_ changes: [(name: String, old: RecordField?, new: RecordField?)]) -> JSONValue {
        var o: [String: JSONValue] = [:]
        for c in changes {
            var f: [String: JSONValue] = [:]
            f["old"] = c.old?.json ?? .null
            f["new"] = c.new?.json ?? .null
            o[c.name] = .object(f)
        }
        return .object(o)
    }

    package init(recordName: String, before: Record?, after: Record?) {
        self.recordName = recordName
        self.before = before
        self.after = after
    }
}

extension ZoneStore {
    /// One change by its sequence number (nil: none, or compacted away by `ck gc`).
    package func change(_ seq: Int64) throws -> HistoryChange? {
        try history.entry(seq)
    }

    /// Changes in `(after, through]`, oldest first or newest first; `body` returns false to
    /// stop. Reads only that range (newest first: in blocks, backwards through the index).
    package func forEachChange(after: Int64, through: Int64, newestFirst: Bool = false, _ body: (HistoryChange) throws -> Bool) throws {
        guard through > after else { return }
        if !newestFirst {
            try history.forEachEntry(after: after, through: through, skipCompacted: after == 0, body)
            return
        }
        var hi = through
        while hi > after {
            let lo = max(after, hi - 256)
            var block: [HistoryChange] = []
            try history.forEachEntry(after: lo, through: hi, skipCompacted: true) { block.append($0); return true }
            for e in block.reversed() where try !body(e) { return }
            hi = lo
        }
    }

    /// The change that wrote the version of `name` current at `seq` (nil: no such record then),
    /// as of the snapshot `snap` (`seq` ≤ its head). Follows the record's own `prev` chain back
    /// from its current version; only a record deleted since (or deleted and made again) needs
    /// the changes after `seq` read, up to its first one.
    package func version(of name: String, at seq: Int64, in snap: ZoneSnapshot) throws -> HistoryChange? {
        var lifeStart: Int64 = snap.head + 1
        if let cur = try snap.record(named: name), let tagSeq = ChangeTag.seq(ofTag: cur.recordChangeTag) {
            guard var c = try change(tagSeq) else { throw HistoryCompaction.compacted(directory, first: try history.retainedFrom()) }
            while c.seq > seq {
                guard let p = c.prev else { break }
                guard let older = try change(p) else { throw HistoryCompaction.compacted(directory, first: try history.retainedFrom()) }
                c = older
            }
            if c.seq <= seq { return c }
            lifeStart = c.seq
        }
        // The first change of the record after `seq` says what it replaced.
        var firstPrev: Int64??
        try forEachChange(after: seq, through: lifeStart - 1) { c in
            guard c.recordName.sameBytes(name) else { return true }
            firstPrev = .some(c.prev)
            return false
        }
        guard let p = firstPrev ?? nil else { return nil }
        return try change(p)
    }

    /// For each record changed in `(from, to]`: the change that wrote its version at `from`
    /// (nil: absent then) and the last change in the range. Keyed by name, in name order.
    func changedRecords(from: Int64, to: Int64) throws -> [(name: NameKey, before: Int64?, last: Int64)] {
        var first: [NameKey: Int64?] = [:]
        var last: [NameKey: Int64] = [:]
        try forEachChange(after: from, through: to) { c in
            let k = NameKey(c.recordName)
            if first[k] == nil { first[k] = .some(c.prev) }
            last[k] = c.seq
            return true
        }
        return last.keys.sorted().map { ($0, first[$0]!, last[$0]!) }
    }

    /// Every record as of `seq` (≤ the snapshot's head): the snapshot's records that no later
    /// change touched, then the earlier versions of those that were, by name.
    package func forEachRecord(at seq: Int64, in snap: ZoneSnapshot, _ body: (Record) throws -> Bool) throws {
        var changed: [NameKey: Int64?] = [:]
        try forEachChange(after: seq, through: snap.head) { c in
            let k = NameKey(c.recordName)
            if changed[k] == nil { changed[k] = .some(c.prev) }
            return true
        }
        var stop = false
        try snap.forEachRecord { r in
            if changed[NameKey(r.recordName)] != nil { return true }
            if try !body(r) { stop = true; return false }
            return true
        }
        if stop { return }
        for k in changed.keys.sorted() {
            guard let p = changed[k] ?? nil else { continue }
            guard let c = try change(p) else { throw HistoryCompaction.compacted(directory, first: try history.retainedFrom()) }
            if let r = c.record, try !body(r) { return }
        }
    }

    /// The records that differ between two points (either order), by name.
    package func diff(from a: Int64, to b: Int64) throws -> [RecordDiff] {
        let lo = min(a, b), hi = max(a, b)
        var out: [RecordDiff] = []
        for (k, beforeSeq, lastSeq) in try changedRecords(from: lo, to: hi) {
            let old = try beforeSeq.map { p -> Record? in
                guard let c = try change(p) else { throw HistoryCompaction.compacted(directory, first: try history.retainedFrom()) }
                return c.record
            } ?? nil
            let new = try change(lastSeq)?.record
            var d = RecordDiff(recordName: k.string, before: old, after: new)
            if a > b { d = RecordDiff(recordName: k.string, before: new, after: old) }
            if !d.isNoChange { out.append(d) }
        }
        return out
    }

    /// For each field of a version, the change that last set it: back along the record's
    /// `prev` chain until every field is accounted for. `boundary` is true for fields whose
    /// setting lies beyond the retained history, or beyond the versions `seen` lets the reader
    /// see (the oldest version reached is named).
    package func blame(_ version: HistoryChange, seen: (HistoryChange) throws -> Bool = { _ in true }) throws -> [(field: String, change: HistoryChange, boundary: Bool)] {
        guard let rec = version.record else { return [] }
        var open = Set(rec.fields.keys)
        var out: [(String, HistoryChange, Bool)] = []
        var cur = version
        while !open.isEmpty {
            guard let p = cur.prev, let older = try change(p), let oldRec = older.record, try seen(older) else {
                let boundary = cur.prev != nil
                for f in open { out.append((f, cur, boundary)) }
                break
            }
            for f in open where oldRec.fields[f] != cur.record?.fields[f] {
                out.append((f, cur, false))
                open.remove(f)
            }
            cur = older
        }
        return out.sorted { NameKey($0.0) < NameKey($1.0) }
    }
}
