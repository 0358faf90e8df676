/// `ck fsck`: checks every file of the data directory and every change history, and repairs
/// what a crash can leave: half-written temporary files, an interrupted zone deletion, a torn
/// history tail, and record files out of step with the history — which, being the write-ahead
/// log and holding every saved record whole, says what each record file must contain.
public struct FsckReport {
    public struct Problem {
        public var path: String
        public var problem: String
        public var repaired: Bool
    }

    public var problems: [Problem] = []
    public var zones = 0
    public var records = 0
    public var historyEntries: Int64 = 0
    public var files = 0

    public var clean: Bool { problems.allSatisfy(\.repaired) }
}

public struct Fsck {
    let paths: DataPaths
    let repair: Bool
    private var report = FsckReport()

    public init(paths: DataPaths, repair: Bool) {
        self.paths = paths
        self.repair = repair
    }

    public static func run(paths: DataPaths, repair: Bool) throws -> FsckReport {
        var f = Fsck(paths: paths, repair: repair)
        try f.walk(paths.root)
        return f.report
    }

    private func rel(_ p: String) -> String { p.hasPrefix(paths.root + "/") ? String(p.dropFirst(paths.root.count + 1)) : p }

    private mutating func note(_ path: String, _ problem: String, repaired: Bool) {
        report.problems.append(.init(path: rel(path), problem: problem, repaired: repaired))
    }

    /// Removes a temporary file an interrupted write left; true if `name` was one.
    private mutating func sweptTemporary(_ dir: String, _ name: String) throws -> Bool {
        guard name.hasPrefix(".tmp-") else { return false }
        if repair { try FileSystem.removeTree(dir + "/" + name) }
        note(dir + "/" + name, "half-written temporary file left by an interrupted write", repaired: repair)
        return true
    }

    private mutating func walk(_ dir: String) throws {
        for name in try FileSystem.list(dir) {
            let p = dir + "/" + name
            if try sweptTemporary(dir, name) { continue }
            if name.hasPrefix(".deleted-") {
                if repair { try FileSystem.removeTree(p) }
                note(p, "zone deletion was interrupted; its files remain", repaired: repair)
                continue
            }
            if FileSystem.isDirectory(p) {
                if name == "zones" {
                    try checkHistory(dir, what: "database")
                    for z in try FileSystem.list(p) where !z.hasPrefix(".") && FileSystem.isDirectory(p + "/" + z) {
                        try checkZone(p + "/" + z)
                    }
                    continue
                }
                try walk(p)
                continue
            }
            report.files += 1
            if name.hasSuffix(".json") {
                do { _ = try JSONParser.parse(try FileSystem.read(p) ?? []) } catch {
                    note(p, "not valid JSON: \(error)", repaired: false)
                }
            }
        }
    }

    private mutating func checkHistory(_ dir: String, what: String) throws {
        let h = ChangeHistory(zoneDirectory: dir)
        for found in try h.repairTail(repair: repair) { note(dir + "/history.log", "\(what) \(found)", repaired: repair) }
    }

    private mutating func checkZone(_ dir: String) throws {
        report.zones += 1
        guard let zj = try? FileSystem.readJSON(dir + "/zone.json"), let zidJSON = zj["zoneID"], let zid = try? ZoneID(json: zidJSON) else {
            note(dir + "/zone.json", "zone file is missing or damaged", repaired: false)
            return
        }
        let z = ZoneStore(directory: dir, zoneID: zid)
        try z.withLock {
            for name in try FileSystem.list(dir) { _ = try sweptTemporary(dir, name) }
            for found in try z.history.repairTail(repair: repair) { note(z.history.logFile, found, repaired: repair) }
            // The last history entry of each record says what its file must hold.
            var last: [String: (seq: Int64, op: String, tag: String?)] = [:]
            var expected: Int64 = 0
            var gap = false
            try z.history.forEachEntry(after: 0) { e in
                expected += 1
                guard let seq = e["seq"]?.int64Value, let n = e["recordName"]?.stringValue, let op = e["op"]?.stringValue else { return true }
                if seq != expected && !gap {
                    gap = true
                    note(z.history.logFile, "history entry \(expected) carries seq \(seq): a gap or duplicate", repaired: false)
                }
                last[n] = (seq, op, e["recordChangeTag"]?.stringValue)
                return true
            }
            report.historyEntries += expected
            // Record files on disk.
            var seen = Set<String>()
            for shard in try FileSystem.list(z.recordsDirectory) where !shard.hasPrefix(".") {
                let sdir = z.recordsDirectory + "/" + shard
                for file in try FileSystem.list(sdir) {
                    let p = sdir + "/" + file
                    if try sweptTemporary(sdir, file) { continue }
                    guard file.hasSuffix(".json") else { continue }
                    report.files += 1
                    let stored = try? FileSystem.readJSON(p)
                    guard let rj = stored?["record"], let rec = try? Record(stored: rj) else {
                        // Torn or damaged: the history knows what belongs here.
                        if let (name, entry) = try entryForFile(z, file: p, last: last) {
                            seen.insert(name)
                            try restore(z, name: name, entry: entry, path: p, why: "record file is torn or damaged")
                        } else {
                            note(p, "record file is damaged and the history has no copy of it", repaired: false)
                        }
                        continue
                    }
                    report.records += 1
                    seen.insert(rec.recordName)
                    guard let l = last[rec.recordName] else {
                        // A record the history never saw (written by hand, or by a tool): adopt it.
                        if repair { try adopt(z, rec) }
                        note(p, "record '\(rec.recordName)' has no history entry", repaired: repair)
                        continue
                    }
                    if l.op == "delete" {
                        if repair { try FileSystem.remove(p) }
                        note(p, "record '\(rec.recordName)' was deleted in the history but its file remains", repaired: repair)
                    } else if let tag = l.tag, tag != rec.recordChangeTag {
                        try restore(z, name: rec.recordName, entry: l.seq, path: p, why: "record '\(rec.recordName)' is older than its last history entry (tag \(rec.recordChangeTag), history \(tag))")
                    }
                }
            }
            for (name, l) in last where l.op == "save" && !seen.contains(name) {
                try restore(z, name: name, entry: l.seq, path: z.recordPath(name), why: "history entry \(l.seq) of record '\(name)' has no record file")
            }
        }
    }

    /// Which record a damaged file stands for, by its encoded name.
    private func entryForFile(_ z: ZoneStore, file: String, last: [String: (seq: Int64, op: String, tag: String?)]) throws -> (String, Int64)? {
        for (name, l) in last where z.recordPath(name) == file { return (name, l.seq) }
        return nil
    }

    private mutating func restore(_ z: ZoneStore, name: String, entry seq: Int64, path: String, why: String) throws {
        guard let e = try z.history.entry(seq) else { note(path, why, repaired: false); return }
        if e["op"]?.stringValue == "delete" {
            if repair { try FileSystem.remove(path) }
            note(path, why, repaired: repair)
            return
        }
        guard let rj = e["record"], let rec = try? Record(stored: rj) else { note(path, why + "; its history entry holds no record", repaired: false); return }
        if repair {
            try FileSystem.makeDirectories(String(path[..<path.lastIndex(of: "/")!]))
            try FileSystem.writeJSON(path, ["schemaVersion": .int(DataPaths.schemaVersion), "record": rec.json()])
        }
        note(path, why, repaired: repair)
    }

    private func adopt(_ z: ZoneStore, _ rec: Record) throws {
        let seq = z.history.head() + 1
        try z.history.append([[
            "seq": .int(seq), "timestamp": .int(rec.modified.timestamp), "op": "save", "recordName": .string(rec.recordName),
            "userRecordName": .string(rec.modified.userRecordName), "deviceID": .string(rec.modified.deviceID),
            "record": rec.json(), "recordChangeTag": .string(rec.recordChangeTag),
        ]])
    }
}
