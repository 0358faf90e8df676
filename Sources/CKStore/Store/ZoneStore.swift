import CKJSON
import CKModel
import Foundation

/// One zone on disk:
/// - `zone.json`: zoneID, creation time, incarnation (a new one each time a zone of this name
///   is made, so tokens of a deleted zone are told apart);
/// - `history.log`, `history.idx`: the change history, the truth everything else derives from;
/// - `records/<shard>/<name>.json`: each record's latest version, derived from the history;
/// - `refs/<shard>/<name>.json`: which records reference a record with DELETE_SELF or VALIDATE;
/// - `deleted/<shard>/<name>.json`: each deleted name's latest deletion (Tombstones.swift);
/// - `applied.json`: how far the record files, references and notifications have been brought
///   up to date with the history (a commit a crash interrupted is finished from there);
/// The zone's lock is kept beside the zones, by name (`locks/<zone>`), so that it outlives the
/// zone: a zone deleted and made again is guarded by the same lock.
package final class ZoneStore {
    package let directory: String
    package let zoneID: ZoneID
    package let history: ChangeHistory
    /// Distinguishes this zone from an earlier zone of the same name that was deleted.
    package let incarnation: String
    /// Shard directories readers opened (readRecord).
    private var shards: [String: Directory] = [:]
    private var records: Directory?
    private let shardLock = NSLock()

    package init(directory: String, zoneID: ZoneID, incarnation: String) {
        self.directory = directory
        self.zoneID = zoneID
        self.incarnation = incarnation
        self.history = ChangeHistory.ofZone(directory)
    }

    var zoneFile: String { directory + "/zone.json" }
    var recordsDirectory: String { directory + "/records" }
    var refsDirectory: String { directory + "/refs" }
    var appliedFile: String { directory + "/applied.json" }

    /// What is on disk where a zone of this name would be.
    package enum Presence {
        case absent
        case present(ZoneStore)
        /// Another name's zone lives at this path (names that differ only in case, on a
        /// case-insensitive file system): never merged, never overwritten.
        case collision(String)
    }

    package static func load(directory: String, zoneID: ZoneID) throws -> Presence {
        // zone.json is written once, when the zone is made (a zone made again is a new file);
        // kept parsed (every request of a server reads it).
        let file = directory + "/zone.json"
        let read = try StampedFiles.shared.value(file) { () throws -> (zoneName: String, incarnation: String, format: Int64?)? in
            guard let j = try FileSystem.readJSON(file) else { return nil }
            guard let stored = j["zoneID"]?["zoneName"]?.stringValue, let inc = j["incarnation"]?.stringValue else {
                throw CloudKitError.internalError("zone file '\(directory)/zone.json' is damaged").with(.repairDataDirectory)
            }
            return (stored, inc, j["schemaVersion"]?.int64Value)
        }
        guard let zone = read ?? nil else { return .absent }
        guard zone.zoneName.sameBytes(zoneID.zoneName) else { return .collision(zone.zoneName) }
        if let v = zone.format, v != FileFormat.schemaVersion {
            throw CloudKitError.internalError("zone '\(Names.describe(zoneID.zoneName))' was written in storage format \(v); this ck reads format \(FileFormat.schemaVersion) (export it with the ck that wrote it, then import)")
        }
        return .present(ZoneStore(directory: directory, zoneID: zoneID, incarnation: zone.incarnation))
    }

    /// Makes the zone's directory and `zone.json`; nil if a zone is there already.
    package static func make(directory: String, zoneID: ZoneID, incarnation: String, timestamp: Int64) throws -> ZoneStore? {
        let doc: JSONValue = [
            "schemaVersion": .int(FileFormat.schemaVersion), "zoneID": zoneID.json, "created": .int(timestamp),
            "incarnation": .string(incarnation),
        ]
        guard try FileSystem.createExclusively(directory + "/zone.json", Array(JSONWriter.pretty(doc).utf8)) else { return nil }
        return ZoneStore(directory: directory, zoneID: zoneID, incarnation: incarnation)
    }

    // MARK: records

    func recordPath(_ name: String) -> String {
        recordsDirectory + "/" + PathEncoding.shard(name) + "/" + PathEncoding.component(name) + ".json"
    }

    func refsPath(_ target: String) -> String {
        refsDirectory + "/" + PathEncoding.shard(target) + "/" + PathEncoding.component(target) + ".json"
    }

    /// Reads one record as of the history's head, as readers do (ZoneSnapshot): its file, or
    /// the history's version while the file is not published yet (a server publishes after
    /// the answer; a crash may leave a commit unpublished). One file, whatever the zone's size.
    /// Nil when absent — or when the file holds a record of another name (case-insensitive file
    /// systems, hashed long names).
    package func record(named name: String) throws -> Record? {
        try snapshot().record(named: name)
    }

    /// The record a write of `name` replaces. A file holding another name's record is never
    /// overwritten: the write is refused instead.
    func recordForWrite(named name: String) throws -> Record? {
        guard let r = try fileRecord(named: name) else { return nil }
        guard r.recordName.sameBytes(name) else {
            throw CloudKitError(.badRequest, "record name '\(Names.describe(name))' collides with record '\(Names.describe(r.recordName))' on this file system (names that differ only in case on a case-insensitive file system); choose another name", recordName: name)
        }
        return r
    }

    /// One record as a reader reads it: as `record(named:)`, through the zone's shard
    /// directories opened once per process (a query reads many records; walking every path from
    /// `/` for each was most of its cost). A shard not there yet is looked up again next time.
    func readRecord(named name: String) throws -> Record? {
        // A record file is replaced whole (renamed into place), never changed: while `lstat`
        // shows the same small file, the record read from it last time is the record.
        let read = { () throws -> Record? in
            guard let r = try self.fileRecord(named: name) else { return nil }
            return r.recordName.sameBytes(name) ? r : nil
        }
        if let kept = try StampedFiles.shared.record(recordPath(name), read) { return kept }
        return try read()
    }

    /// The record in `name`'s file, whatever name it holds; nil when there is none.
    private func fileRecord(named name: String) throws -> Record? {
        let shard = PathEncoding.shard(name)
        // One call for shard and file where the kernel can open a path without following any
        // link on the way (else, and for anything but a plain file or its absence, below).
        if let root = try recordsRoot() {
            switch root.openBeneath(shard + "/" + PathEncoding.component(name) + ".json") {
            case .absent: return nil
            case .opened(let f, let st):
                defer { close(f) }
                // The path only for a message: not built for each record a page reads.
                return try StoredRecordDecoder.record(inFile: try FileSystem.readAll(f, status: st, path: recordPath(name)), shownAs: recordPath(name))
            case .unsupported: break
            }
        }
        shardLock.lock()
        var dir = shards[shard]
        shardLock.unlock()
        if dir == nil {
            guard let d = try recordsRoot()?.subdirectory(shard) else { return nil }
            shardLock.lock()
            shards[shard] = d
            shardLock.unlock()
            dir = d
        }
        return try dir!.readStoredRecord(PathEncoding.component(name) + ".json", shownAs: recordPath(name))
    }

    /// The records directory, opened once (each shard is then one `openat` away, not a walk
    /// from `/`); nil until the zone has one.
    private func recordsRoot() throws -> Directory? {
        shardLock.lock()
        let r = records
        shardLock.unlock()
        if let r { return r }
        guard let d = try Directory.open(recordsDirectory) else { return nil }
        shardLock.lock()
        records = d
        shardLock.unlock()
        return d
    }

    /// Records referencing `target` with DELETE_SELF or VALIDATE: source name → actions.
    func referrers(of target: String) throws -> [NameKey: [String]] {
        guard let j = try FileSystem.readJSON(refsPath(target)) else { return [:] }
        return ZoneStore.parseReferrers(j)
    }

    static func parseReferrers(_ j: JSONValue) -> [NameKey: [String]] {
        var out: [NameKey: [String]] = [:]
        for r in j["referrers"]?.arrayValue ?? [] {
            guard let n = r["recordName"]?.stringValue else { continue }
            out[NameKey(n)] = (r["actions"]?.arrayValue ?? []).compactMap(\.stringValue)
        }
        return out
    }

    static func referrersJSON(target: String, _ refs: [NameKey: [String]]) -> JSONValue {
        let list: [JSONValue] = refs.keys.sorted().map { k in
            ["recordName": .string(k.string), "actions": .array(refs[k]!.map(JSONValue.string))]
        }
        return ["schemaVersion": .int(FileFormat.schemaVersion), "target": .string(target), "referrers": .array(list)]
    }

    /// The zone's records as of its history's head, for readers (see ZoneSnapshot).
    package func snapshot() throws -> ZoneSnapshot { try ZoneSnapshot(self) }

    /// Streams every record file, shard by shard, in a stable order (same state, same order),
    /// opening each directory once, read on every core (ParallelRecordReader). Readers go through `snapshot()`; writers, who hold the
    /// lock and have finished any interrupted commit, may read the files directly.
    func forEachRecordFile(_ body: (Record) throws -> Bool) throws {
        try forEachRecordFile(prepare: nil) { r, _ in try body(r) }
    }

    /// The same, with `prepare`'s result for each record computed on the thread that read it.
    func forEachRecordFile(prepare: ((Record) -> String)?, _ body: (Record, String?) throws -> Bool) throws {
        guard let records = try Directory.open(recordsDirectory) else { return }
        let shards = try records.entries().filter { !$0.hasPrefix(".") && records.kind(of: $0) == .directory }
        try ParallelRecordReader(records: records, shards: shards, prepare: prepare).forEach(body)
    }

    // MARK: the applied cursor

    /// `applied.json`: how far the derived files are done.
    /// - `seq`: the last history entry whose record files, references and notifications are
    ///   done — published, renamed into place, which every process sees at once;
    /// - `durable`: the last one whose files are also synced to the disk;
    /// - `boot`: the machine's boot (BootSession) when it was written.
    /// Unsynced files are lost only if the machine stops, so `seq` holds in the boot that wrote
    /// it; after a restart only `durable` does, and the entries after it are redone from the
    /// history (which is synced at every commit). A cursor without `boot` was written after a
    /// sync. A missing or unreadable cursor is 0: everything is redone, which is always correct.
    struct AppliedCursor {
        package var seq: Int64 = 0
        var durable: Int64 = 0
        var boot: String?

        /// How far the files can be relied on now.
        package var trusted: Int64 { boot == nil || boot == BootSession.id ? seq : durable }

        init(seq: Int64 = 0, durable: Int64 = 0, boot: String? = nil) {
            (self.seq, self.durable, self.boot) = (seq, durable, boot)
        }

        /// The fields a checksum covers, in the order they are written.
        private var fields: [String: JSONValue] {
            var o: [String: JSONValue] = ["schemaVersion": .int(FileFormat.schemaVersion), "seq": .int(seq)]
            if let b = boot { (o["durable"], o["boot"]) = (.int(durable), .string(b)) }
            return o
        }

        /// The file: one line of JSON with its checksum (`check`: FNV-1a of the line without
        /// it), padded with spaces to a fixed length, so that each version overwrites the one
        /// before in place, byte for byte.
        var fileBytes: [UInt8] {
            var o = fields
            o["check"] = .string(Self.check(fields))
            var line = Array(JSONWriter.compact(.object(o)).utf8)
            if line.count < Self.fileLength - 1 { line += [UInt8](repeating: 0x20, count: Self.fileLength - 1 - line.count) }
            return line + [0x0A]
        }

        static let fileLength = 160

        /// A cursor as read; nil when its checksum does not match (a torn write, or one read
        /// while it was written). A cursor without one (ck before issue 38 wrote it whole, by
        /// rename, and so never torn) is taken as it is.
        init?(json j: JSONValue) {
            guard let seq = j["seq"]?.int64Value else { return nil }
            self.init(seq: seq, durable: min(j["durable"]?.int64Value ?? seq, seq), boot: j["boot"]?.stringValue)
            if let c = j["check"] {
                var o = j.objectValue ?? [:]
                o["check"] = nil
                guard c.stringValue == Self.check(o) else { return nil }
            }
        }

        static func check(_ o: [String: JSONValue]) -> String {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in JSONWriter.compact(.object(o)).utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return String(h, radix: 16)
        }
    }

    func appliedCursor() throws -> AppliedCursor {
        // Written in place (setApplied), each version with a checksum of its own. A version
        // read while a writer rewrites it may be torn: the checksum says so, and it is read
        // again. One that cannot be parsed, or stays torn, counts as nothing applied: readers
        // then take every entry from the history, which is slower, never wrong. Kept while the
        // file's stamp is the same (a stamp that recent is never kept: StampedFiles).
        // The first attempt takes the cursor kept parsed (every request of a server reads it),
        // a whole one only: a torn one is read again.
        for attempt in 0..<3 {
            let read: AppliedCursor??
            do {
                let parse = { try FileSystem.readJSON(self.appliedFile).flatMap(AppliedCursor.init(json:)) }
                read = attempt == 0 ? try StampedFiles.shared.value(appliedFile, keep: { $0 != nil }, parse) : .some(try parse())
            } catch let e as CloudKitError where e.code == .internalError { read = nil }
            guard let parsed = read else { return AppliedCursor() }
            guard let cursor = parsed else { continue }
            return cursor
        }
        return AppliedCursor()
    }

    /// Whether the cursor's file is there but not a cursor: unparseable, or its checksum
    /// wrong (a write torn by a crash or a full disk). Counted as nothing applied meanwhile.
    func appliedCursorIsDamaged() throws -> Bool {
        let read: JSONValue?
        do { read = try FileSystem.readJSON(appliedFile) } catch let e as CloudKitError where e.code == .internalError { return true }
        guard let j = read else { return false }
        return AppliedCursor(json: j) == nil
    }

    /// The last history entry whose derived files can be relied on (see AppliedCursor).
    func appliedSeq() throws -> Int64 { try appliedCursor().trusted }

    /// Moves the cursor to `seq`, the files being synced through `durable` (where the boot
    /// cannot be told, every commit syncs them: the cursor is written without `boot`, as
    /// synced). Not synced on its own: after a crash an older cursor only means redoing
    /// idempotent work. The caller holds the zone's lock.
    func setApplied(_ seq: Int64, durable: Int64) throws {
        var c = AppliedCursor(seq: seq, durable: seq, boot: nil)
        if let boot = BootSession.id { (c.durable, c.boot) = (min(durable, seq), boot) }
        let bytes = c.fileBytes
        // Over a cursor of this form: written in place — no new file, no rename, no inode
        // freed on every commit (issue 38). The first one, or one of the old form, is written
        // whole and renamed into place. (A cursor only moves forward: a repair that finds one
        // ahead of the history removes it first, FsckZone.)
        if let (dir, leaf) = try Directory.parent(of: appliedFile), let st = dir.status(of: leaf), (st.st_mode & S_IFMT) == S_IFREG,
           st.st_size == off_t(bytes.count) {
            let fd = try dir.openForWriting(leaf, create: false)
            defer { close(fd) }
            try FileSystem.overwrite(fd, bytes, offset: 0, path: appliedFile)
            return
        }
        try FileSystem.writeAtomically(appliedFile, bytes, durable: false)
    }

    /// Published entries a commit leaves unsynced at most: past them it syncs the files. What
    /// a restart of the machine makes readers take from the history, and the next writer
    /// redo, until then.
    package nonisolated(unsafe) static var unsyncedEntries: Int64 = 8192

    /// After a commit through `seq` published its files: syncs them if that many entries are
    /// unsynced, or always where the machine's boot cannot be told. How far the files are
    /// synced then (for `setApplied`). `background` (a bulk load, whose process goes on
    /// committing): the sync is started on another thread instead, and a later commit of this
    /// process records what it covered.
    func syncFilesIfDue(through seq: Int64, background: Bool = false) -> Int64 {
        let durable = min((try? knownDurable()) ?? 0, seq)
        guard BootSession.id == nil || seq - durable >= ZoneStore.unsyncedEntries else { return durable }
        if background && BootSession.id != nil {
            BackgroundSyncs.shared.start(self, through: seq)
            return durable
        }
        syncFiles()
        return seq
    }

    /// How far the files are known synced: the cursor's `durable`, or further if a sync this
    /// process started in the background has finished since.
    func knownDurable() throws -> Int64 {
        max(try appliedCursor().durable, BackgroundSyncs.shared.finished(self) ?? 0)
    }
}
