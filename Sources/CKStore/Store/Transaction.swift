import CKModel

/// Pending changes to one zone, layered over the disk (and over a parent transaction), so a
/// batch sees its own earlier operations and a failed operation can be dropped whole. Names
/// are keyed by their bytes.
package final class Transaction {
    package let zone: ZoneStore
    package let parent: Transaction?
    /// nil value: deleted in this transaction.
    package var records: [NameKey: Record?] = [:]
    /// target → (source → actions); an empty map removes the index file.
    package var refs: [NameKey: [NameKey: [String]]] = [:]
    package var entries: [HistoryEntry] = []
    package var assets: [String: [UInt8]] = [:]
    /// What the transaction did to each record, in order, for subscriptions to match.
    package var changes: [RecordChange] = []
    private(set) var nextSeq: Int64
    /// Names known to have no stored record (a bulk load's, BulkLoad): not looked up on disk.
    private let knownAbsent: ((NameKey) -> Bool)?
    /// Commits of this process whose files are not published yet (UnpublishedCommits): what
    /// the zone holds, over what its files say.
    private let unpublished: UnpublishedCommits.Overlay?

    package init(zone: ZoneStore, nextSeq: Int64, knownAbsent: ((NameKey) -> Bool)? = nil, unpublished: UnpublishedCommits.Overlay? = nil) {
        self.zone = zone
        self.parent = nil
        self.nextSeq = nextSeq
        self.knownAbsent = knownAbsent
        self.unpublished = unpublished.flatMap { $0.isEmpty ? nil : $0 }
    }

    private init(parent: Transaction) {
        self.zone = parent.zone
        self.parent = parent
        self.nextSeq = parent.nextSeq
        self.knownAbsent = nil
        self.unpublished = nil
    }

    package func child() -> Transaction { Transaction(parent: self) }

    package func record(_ name: String) throws -> Record? {
        if let r = records[NameKey(name)] { return r }
        if let p = parent { return try p.record(name) }
        if let r = unpublished?.records[NameKey(name)] { return r }
        if let r = readAhead[NameKey(name)] { return try r.get() }
        if let absent = knownAbsent, absent(NameKey(name)) { return nil }
        return try zone.recordForWrite(named: name)
    }

    /// What the disk held for names read ahead (`readAhead(_:)`); an error is thrown when the
    /// operation that needs the record asks for it, as reading it then would.
    private var readAhead: [NameKey: Result<Record?, Error>] = [:]

    /// Reads the stored records of a large batch's names on every core before its operations
    /// run (one after another, each looking its record up, they waited on one file at a time).
    /// The caller holds the zone's lock, so what is read stays true while the batch runs.
    func readAhead(_ names: [String]) {
        var names = knownAbsent.map { absent in names.filter { !absent(NameKey($0)) } } ?? names
        if let u = unpublished { names = names.filter { u.records[NameKey($0)] == nil } }
        guard parent == nil, names.count >= RecordFileWriter.parallelFrom else { return }
        let zone = self.zone
        let results = Parallel.map(names.count, chunk: 16) { i in Result { try zone.recordForWrite(named: names[i]) } }
        for (i, n) in names.enumerated() { readAhead[NameKey(n)] = results[i] }
    }

    func referrers(_ target: String) throws -> [NameKey: [String]] {
        if let r = refs[NameKey(target)] { return r }
        if let p = parent { return try p.referrers(target) }
        if let r = unpublished?.refs[NameKey(target)] { return r }
        return try zone.referrers(of: target)
    }

    func takeSeq() -> Int64 {
        defer { nextSeq += 1 }
        return nextSeq
    }

    package func put(_ r: Record) { records[NameKey(r.recordName)] = .some(r) }
    package func remove(_ name: String) { records[NameKey(name)] = .some(nil) }

    /// Folds a successful child into this transaction.
    package func merge(_ c: Transaction) {
        for (k, v) in c.records { records[k] = .some(v) }
        for (k, v) in c.refs { refs[k] = v }
        entries.append(contentsOf: c.entries)
        changes.append(contentsOf: c.changes)
        for (k, v) in c.assets { assets[k] = v }
        nextSeq = c.nextSeq
    }

    /// Moves `source` in the reference index from its old DELETE_SELF/VALIDATE targets to its
    /// new ones.
    func reindex(source: String, old: Record?, new: Record?) throws {
        func targets(_ r: Record?) -> [NameKey: Set<String>] {
            var t: [NameKey: Set<String>] = [:]
            for (_, ref) in r?.references ?? [] where ref.action != .none {
                t[NameKey(ref.recordName), default: []].insert(ref.action.rawValue)
            }
            return t
        }
        let before = targets(old), after = targets(new)
        let key = NameKey(source)
        for target in Set(before.keys).union(after.keys) where before[target] != after[target] {
            var m = try referrers(target.string)
            if let a = after[target] { m[key] = a.sorted() } else { m[key] = nil }
            refs[target] = m
        }
    }
}

/// One record's change within a committed batch: what subscriptions are matched against.
package struct RecordChange {
    package enum Kind { case created, updated, deleted }
    package var kind: Kind
    package var recordName: String
    /// Its history entry: a redone delivery skips what an inbox already has (NotificationInbox).
    package var seq: Int64
    package var before: Record?
    package var after: Record?
    /// Who made it, from which device (which is not notified of its own change), and when.
    package var userRecordName: String
    package var deviceID: String
    package var timestamp: Int64
}

extension Transaction {
    /// Bytes this request brings for a checksum (this save's `@file`, or a downloadURL read).
    func pendingAsset(_ sum: String) -> [UInt8]? { assets[sum] ?? parent?.pendingAsset(sum) }
}
