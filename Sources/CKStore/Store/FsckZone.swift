import CKModel

/// `ck fsck` on one zone, under its lock: the history first (its uncommitted tail cut, every
/// entry read), then everything derived from it — an interrupted commit finished, each record
/// file checked against the history's last entry for it (restored, removed, or adopted into
/// the history when written by hand), the tombstones checked against its deletions, the
/// reference index rebuilt from the records, and the database history's entries for the zone
/// completed.
extension Fsck {
    /// `announced`: what the database history records of each zone (nil when that history is
    /// damaged: then no entry is added to it).
    func checkZone(_ db: Database, directoryName entry: String, announced snapshot: [NameKey: [String: Int64]]?, through: Int64) throws {
        let dir = db.directory + "/zones/" + entry
        report.zones += 1
        func zoneName() -> String? {
            guard let zj = try? FileSystem.readJSON(dir + "/zone.json"), let name = zj["zoneID"]?["zoneName"]?.stringValue,
                  PathEncoding.component(name) == entry else { return nil }
            return name
        }
        var found = zoneName()
        if found == nil {
            // A zone being made right now: its maker holds the zone's lock (and, for a custom
            // zone, the database's) until zone.json is there.
            let l = try PathEncoding.decodeSimple(entry).map { try self.lock(db.journal.zoneLockFile($0)) } ?? self.lock(db.journal.databaseLockFile)
            l?.unlock()
            found = zoneName()
        }
        guard let name = found else {
            if try FileSystem.isDirectory(dir) { note(dir + "/zone.json", "zone file is missing, damaged or names another zone", repaired: false) }
            return
        }
        let lock = try self.lock(db.journal.zoneLockFile(name))
        defer { lock?.unlock() }
        guard case .present(let z) = try db.zonePresence(name) else { return }
        // What the database history says of this zone now that no writer of it can commit:
        // the snapshot, and what was recorded since.
        var announced = snapshot ?? [:]
        if snapshot != nil { try? Fsck.announcements(db, after: through, through: nil, into: &announced) }
        guard try checkHistory(z.history, what: "history") else { return }
        try checkAppliedCursor(z)
        // Before the history is applied: delivering its notifications reads the registry.
        try checkShareRegistry(db, z)
        do {
            if repair {
                let n = try db.finishInterruptedCommit(z)
                if n > 0 { note(z.directory, "\(n) history entries were committed but not yet applied to the record files", repaired: true) }
            } else if try z.appliedSeq() < z.history.head() {
                note(z.directory, "history entries after \(try z.appliedSeq()) are committed but not yet applied to the record files", repaired: false)
            }
        } catch let e as CloudKitError {
            note(z.directory, "cannot apply the history: \(e.reason)", repaired: false)
            return
        }
        let headBefore = try z.history.head()
        let (latestDeletions, live) = try checkRecordFiles(z, schema: try? db.schema())
        try checkTombstones(z, latestDeletions: latestDeletions)
        try rebuildReferences(z)
        try checkIndexes(db, z, live: live)
        if db.journal.announces(name), snapshot != nil {
            // Adopting records adds entries; recording them is part of that repair.
            let head = try z.history.head()
            let covered = announced[NameKey(name)]?[z.incarnation]
            if covered != nil && covered! >= headBefore && head > headBefore {
                if repair { _ = try db.journal.withDatabaseLock(holdingZone: name) { try db.journal.appendDatabaseEntry(DatabaseIntent(op: .change, zoneName: name, incarnation: z.incarnation, zoneSeq: head)) } }
            } else if covered == nil || covered! < head {
                if repair {
                    try db.journal.withDatabaseLock(holdingZone: name) {
                        let op: DatabaseIntent.Op = covered == nil ? .create : .change
                        try db.journal.appendDatabaseEntry(DatabaseIntent(op: op, zoneName: name, incarnation: z.incarnation, zoneSeq: op == .change ? head : nil))
                    }
                }
                note(db.databaseHistory.logFile, covered == nil ? "the database history lacks zone '\(Names.describe(name))'" :
                        "the database history lacks the changes of zone '\(Names.describe(name))' after entry \(covered!)", repaired: repair)
            }
        }
    }

    /// The applied cursor (`applied.json`) is derived: a cursor that is no regular file, that
    /// is damaged (its checksum wrong: a torn write), or that names entries past the history's head (readers would trust files for entries that
    /// do not exist, and a commit a crash left unapplied would stay hidden), is removed. A
    /// missing cursor means nothing is applied: the interrupted-commit repair that follows
    /// replays the history into the files (idempotent; notifications are delivered once per
    /// entry) and writes the cursor again.
    private func checkAppliedCursor(_ z: ZoneStore) throws {
        guard let found = try Directory.parent(of: z.appliedFile), let kind = found.0.kind(of: found.1) else { return }
        let (parent, name) = found
        if kind != .file {
            if repair { try kind == .directory ? parent.removeTree(name) : parent.remove(name) }
            note(z.appliedFile, "the applied cursor is not a regular file (\(kind == .directory ? "a directory" : "a special file")); it is rebuilt from the history", repaired: repair)
            return
        }
        if try z.appliedCursorIsDamaged() {
            if repair { try parent.remove(name) }
            note(z.appliedFile, "the applied cursor is damaged (a torn write); it is rebuilt from the history", repaired: repair)
            return
        }
        let cursor = try z.appliedCursor(), head = try z.history.head()
        if cursor.seq > head {
            if repair { try parent.remove(name) }
            note(z.appliedFile, "the applied cursor is at entry \(cursor.seq), ahead of the history's head \(head); it is rebuilt from the history", repaired: repair)
        }
    }

    /// A private zone's share registry (`shares/<zone>.json`) is derived from the zone's share
    /// records (SharedDatabase): rebuilt when it is unreadable or misses one. A name that leads
    /// to no share is allowed (readers check each; a share's deletion leaves its name).
    private func checkShareRegistry(_ db: Database, _ z: ZoneStore) throws {
        guard db.scope == .private, !z.zoneID.isDefault else { return }
        // The share records the history leaves saved, in the order they were last saved.
        var last: [NameKey: (seq: Int64, share: Bool)] = [:]
        try z.history.forEachEntry(after: 0) { e in
            last[e.key] = (e.seq, e.op == .save && e.record?.recordType == ShareInfo.recordType)
            return true
        }
        let shares = last.filter(\.value.share).sorted { $0.value.seq < $1.value.seq }.map(\.key.string)
        let registry = ShareRegistry(database: db.directory, zoneName: z.zoneID.zoneName)
        let exists = try FileSystem.exists(registry.file)
        guard exists || !shares.isEmpty else { return }
        let listed: [String]?
        do { listed = exists ? try registry.shareNames() : nil } catch { listed = nil }
        let stored = exists ? (try? FileSystem.readJSON(registry.file))??["zoneName"]?.stringValue : nil
        if let l = listed, stored.map({ $0.sameBytes(z.zoneID.zoneName) }) == true,
           Set(shares.map(NameKey.init)).isSubset(of: l.map(NameKey.init)) { return }
        if repair { try registry.write(shares, zoneName: z.zoneID.zoneName) }
        let what = !exists ? "is missing" : listed == nil || stored == nil ? "is damaged" : "misses share records of the zone"
        note(registry.file, "the share registry of zone '\(Names.describe(z.zoneID.zoneName))' \(what) (rebuilt from its \(shares.count) share record\(shares.count == 1 ? "" : "s"))", repaired: repair)
    }

    /// Every record file against the history's last entry for its record. Returns each deleted
    /// name's latest deletion, read on the way (for its tombstone).
    /// Returns the latest deletion of each record deleted, and how many records of each type
    /// the history leaves.
    private func checkRecordFiles(_ z: ZoneStore, schema: Schema?) throws -> (latestDeletions: [NameKey: Int64], live: [String: Int64]) {
        // Records whose values their schema no longer takes (a schema edited by hand, or
        // imported by an earlier ck): each save of them would fail. Reported once per field
        // and value type, with the first record and how many; fsck cannot tell which is right.
        var disagreements: [String: (first: String, count: Int)] = [:]
        func checkSchema(_ r: Record) {
            guard let type = schema?.types[r.recordType] else { return }
            for (name, v) in r.fields {
                guard let f = type.fields[name], !f.type.accepts(v.type) else { continue }
                let key = "field '\(name)' of record type '\(r.recordType)' is \(f.type) in the schema, but records hold \(v.type) values"
                disagreements[key] = (disagreements[key]?.first ?? r.recordName, (disagreements[key]?.count ?? 0) + 1)
            }
        }
        defer {
            for (what, d) in disagreements.sorted(by: { $0.key < $1.key }) {
                note(z.directory, "\(what) (record '\(Names.describe(d.first))'\(d.count > 1 ? " and \(d.count - 1) more" : "")): saving them fails until the schema or the records change", repaired: false)
            }
        }
        struct Last { var seq: Int64; var op: HistoryEntry.Op; var tag: String?; var type: String? }
        var last: [NameKey: Last] = [:]
        var latestDeletions: [NameKey: Int64] = [:]
        // Records the repair adopts into the history, and their types: counted with the rest.
        var adopted: [NameKey: String] = [:]
        try z.history.forEachEntry(after: 0) { e in
            last[e.key] = Last(seq: e.seq, op: e.op, tag: e.recordChangeTag, type: e.record?.recordType)
            if e.op == .delete { latestDeletions[e.key] = e.seq }
            return true
        }
        // Which record each file name stands for.
        var byFile: [String: NameKey] = [:]
        for k in last.keys { byFile[z.recordPath(k.string)] = k }
        var seen = Set<NameKey>()
        if let records = try Directory.open(z.recordsDirectory) {
            for shard in try records.entries() where !shard.hasPrefix(".") && records.kind(of: shard) == .directory {
                guard let sdir = try records.subdirectory(shard) else { continue }
                for file in try sdir.entries() where file.hasSuffix(".json") && !file.hasPrefix(".") && sdir.kind(of: file) == .file {
                    let path = z.recordsDirectory + "/" + shard + "/" + file
                    guard let rj = (try? sdir.readJSON(file))??["record"], let rec = try? Record(stored: rj) else {
                        if let k = byFile[path] {
                            seen.insert(k)
                            try restore(z, k, last[k]!.seq, path: path, why: "record file is torn or damaged")
                        } else {
                            note(path, "record file is damaged and the history has no copy of it", repaired: false)
                        }
                        continue
                    }
                    report.records += 1
                    checkSchema(rec)
                    let k = NameKey(rec.recordName)
                    guard z.recordPath(rec.recordName) == path else {
                        // A record in another record's file: the history decides what belongs where.
                        if last[k] == nil, repair { try adopt(z, rec); adopted[k] = rec.recordType }
                        if repair { try sdir.remove(file) }
                        note(path, "file holds record '\(Names.describe(rec.recordName))', whose file is elsewhere", repaired: repair)
                        if let f = byFile[path] {
                            seen.insert(f)
                            try restore(z, f, last[f]!.seq, path: path, why: "record file held another record")
                        }
                        continue
                    }
                    seen.insert(k)
                    guard let l = last[k] else {
                        if repair { try adopt(z, rec); adopted[k] = rec.recordType }
                        note(path, "record '\(Names.describe(rec.recordName))' has no history entry (adopted)", repaired: repair)
                        continue
                    }
                    if l.op == .delete {
                        if repair { try sdir.remove(file) }
                        note(path, "record '\(Names.describe(rec.recordName))' was deleted in the history but its file remains", repaired: repair)
                    } else if let tag = l.tag, tag != rec.recordChangeTag {
                        try restore(z, k, l.seq, path: path, why: "record '\(Names.describe(rec.recordName))' differs from its last history entry (tag \(rec.recordChangeTag), history \(tag))")
                    }
                }
            }
        }
        for (k, l) in last where l.op == .save && !seen.contains(k) {
            let path = z.recordPath(k.string)
            let why = (try? Directory.parent(of: path))??.0.kind(of: PathEncoding.component(k.string) + ".json") == .symlink
                ? "a symbolic link stands in place of record '\(Names.describe(k.string))' (replaced by the record, from history entry \(l.seq); the link's target is untouched)"
                : "history entry \(l.seq) of record '\(Names.describe(k.string))' has no record file"
            try restore(z, k, l.seq, path: path, why: why)
        }
        var live: [String: Int64] = [:]
        for (k, l) in last where l.op == .save && adopted[k] == nil { live[l.type ?? "", default: 0] += 1 }
        for t in adopted.values { live[t, default: 0] += 1 }
        return (latestDeletions, live)
    }

    private func restore(_ z: ZoneStore, _ name: NameKey, _ seq: Int64, path: String, why: String) throws {
        guard let e = try z.history.entry(seq) else { note(path, why, repaired: false); return }
        if e.op == .delete {
            if repair { try FileSystem.remove(path) }
            note(path, why, repaired: repair)
            return
        }
        guard let rec = e.record, NameKey(rec.recordName) == name else {
            note(path, why + "; its history entry holds no record", repaired: false)
            return
        }
        if repair { try FileSystem.writeJSON(path, ["schemaVersion": .int(FileFormat.schemaVersion), "record": rec.json()]) }
        note(path, why, repaired: repair)
    }

    /// A record the history never saw (written by hand, or by a tool) joins it as a new
    /// version, with a change tag of its own, so change feeds and tags stay true.
    private func adopt(_ z: ZoneStore, _ found: Record) throws {
        let seq = try z.history.head() + 1
        var rec = found
        rec.recordChangeTag = ChangeTag.tag(for: seq)
        // No earlier version in the history (that is why it is adopted): no `prev`. The tag the
        // file carries names some other entry (a copied record's), not a version of this one.
        try z.history.append([HistoryEntry(seq: seq, timestamp: rec.modified.timestamp, op: .save, recordName: rec.recordName,
                                           userRecordName: rec.modified.userRecordName, deviceID: rec.modified.deviceID, record: rec, prev: nil)])
        try FileSystem.writeJSON(z.recordPath(rec.recordName), ["schemaVersion": .int(FileFormat.schemaVersion), "record": rec.json()])
        try z.setApplied(seq, durable: try z.knownDurable())
    }

    /// The reference index, recomputed from the records and compared with the files.
    private func rebuildReferences(_ z: ZoneStore) throws {
        var expected: [NameKey: [NameKey: [String]]] = [:]
        if let records = try Directory.open(z.recordsDirectory) {
            for shard in try records.entries() where !shard.hasPrefix(".") && records.kind(of: shard) == .directory {
                guard let sdir = try records.subdirectory(shard) else { continue }
                for file in try sdir.entries() where file.hasSuffix(".json") && !file.hasPrefix(".") {
                    // Damaged files were reported above.
                    guard let rj = (try? sdir.readJSON(file))??["record"], let r = try? Record(stored: rj) else { continue }
                    var t: [NameKey: Set<String>] = [:]
                    for (_, ref) in r.references where ref.action != .none { t[NameKey(ref.recordName), default: []].insert(ref.action.rawValue) }
                    for (target, actions) in t { expected[target, default: [:]][NameKey(r.recordName)] = actions.sorted() }
                }
            }
        }
        var found: [NameKey: [NameKey: [String]]] = [:]
        var files: [NameKey: String] = [:]
        if let refs = try Directory.open(z.refsDirectory) {
            for shard in try refs.entries() where !shard.hasPrefix(".") && refs.kind(of: shard) == .directory {
                guard let sdir = try refs.subdirectory(shard) else { continue }
                for file in try sdir.entries() where file.hasSuffix(".json") && !file.hasPrefix(".") {
                    let path = z.refsDirectory + "/" + shard + "/" + file
                    guard let j = try? sdir.readJSON(file), let target = j["target"]?.stringValue, z.refsPath(target) == path else {
                        if repair { try sdir.remove(file) }
                        note(path, "reference index file is damaged", repaired: repair)
                        continue
                    }
                    found[NameKey(target)] = ZoneStore.parseReferrers(j)
                    files[NameKey(target)] = path
                }
            }
        }
        var fix: [NameKey: [NameKey: [String]]] = [:]
        for k in Set(expected.keys).union(found.keys) where expected[k] != found[k] {
            fix[k] = expected[k] ?? [:]
            note(files[k] ?? z.refsPath(k.string), "reference index for '\(Names.describe(k.string))' disagrees with the records (DELETE_SELF and VALIDATE depend on it)", repaired: repair)
        }
        if repair && !fix.isEmpty {
            let p = try z.prepare(records: [:], refs: fix)
            try z.publish(p)
            z.syncFiles()
        }
    }
}
