/// A zone's append-only change history, kept beside the zone: `history.log` holds one JSON
/// entry per change (with the full record for saves, so the log doubles as a write-ahead log),
/// and `history.idx` holds the 8-byte offset of each entry, so entry `seq` is found without
/// reading the ones before it.
public struct ChangeHistory {
    public let directory: String
    public var logFile: String { directory + "/history.log" }
    public var indexFile: String { directory + "/history.idx" }

    public var metaFile: String { directory + "/history.json" }

    public init(zoneDirectory: String) { directory = zoneDirectory }

    /// How many times the retained history was dropped: tokens issued in an earlier epoch are
    /// CHANGE_TOKEN_EXPIRED.
    public func epoch() throws -> Int64 {
        try FileSystem.readJSON(metaFile)?["epoch"]?.int64Value ?? 0
    }

    /// Drops the retained history up to now, as CloudKit's server does on its own schedule:
    /// every token issued so far expires; tokens issued from now on work.
    public func expire() throws {
        try FileSystem.writeJSON(metaFile, ["schemaVersion": .int(DataPaths.schemaVersion), "epoch": .int(try epoch() + 1),
                                            "expiredAt": .int(head())])
    }

    /// Sequence number of the newest change (0 for an empty history).
    public func head() -> Int64 { (FileSystem.size(indexFile) ?? 0) / 8 }

    /// Appends entries whose `seq` values continue from `head()`. The log is written and synced
    /// before the index, so a crash leaves at worst a log tail without index entries, which
    /// `ck fsck` repairs.
    public func append(_ entries: [JSONValue]) throws {
        guard !entries.isEmpty else { return }
        var offset = FileSystem.size(logFile) ?? 0
        var log = [UInt8]()
        var idx = [UInt8]()
        for e in entries {
            for s in stride(from: 56, through: 0, by: -8) { idx.append(UInt8((UInt64(offset) >> UInt64(s)) & 0xff)) }
            let line = Array(JSONWriter.line(e).utf8)
            log.append(contentsOf: line)
            offset += Int64(line.count)
        }
        try FileSystem.append(logFile, log)
        try FileSystem.append(indexFile, idx)
    }

    /// Entries with seq > `after`, at most `limit` of them (nil: all), oldest first.
    public func entries(after: Int64, limit: Int? = nil) throws -> [JSONValue] {
        var out: [JSONValue] = []
        try forEachEntry(after: after) { e in
            out.append(e)
            return limit.map { out.count < $0 } ?? true
        }
        return out
    }

    /// Streams entries with seq > `after`; the body returns false to stop.
    public func forEachEntry(after: Int64, _ body: (JSONValue) throws -> Bool) throws {
        let h = head()
        guard after < h else { return }
        guard let start = try offset(of: after + 1) else { return }
        let fd = open(logFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        lseek(fd, off_t(start), SEEK_SET)
        var pending = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 65536)
        var seq = after
        while seq < h {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 65536) }
            if n <= 0 { break }
            pending.append(contentsOf: buf[0..<n])
            var lineStart = 0
            while seq < h, let nl = pending[lineStart...].firstIndex(of: 0x0A) {
                let e = try JSONParser.parse(Array(pending[lineStart..<nl]))
                lineStart = nl + 1
                seq += 1
                if try !body(e) { return }
            }
            pending.removeFirst(lineStart)
        }
    }

    /// One entry by its sequence number.
    public func entry(_ seq: Int64) throws -> JSONValue? {
        guard seq >= 1, seq <= head() else { return nil }
        var out: JSONValue?
        try forEachEntry(after: seq - 1) { e in out = e; return false }
        return out
    }

    /// Repairs what a crash can leave at the end of the history: an index whose size is not a
    /// multiple of 8, and log bytes after the last indexed entry (a write that was never
    /// acknowledged). Returns what it found.
    public func repairTail(repair: Bool) throws -> [String] {
        var found: [String] = []
        let idxSize = FileSystem.size(indexFile) ?? 0
        if idxSize % 8 != 0 {
            found.append("history index has a torn last entry (\(idxSize % 8) stray bytes)")
            if repair { try FileSystem.truncate(indexFile, to: idxSize - idxSize % 8) }
        }
        let h = (repair ? (FileSystem.size(indexFile) ?? 0) : idxSize - idxSize % 8) / 8
        var end: Int64 = 0
        if h > 0, let last = try offset(of: h) {
            let fd = open(logFile, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                defer { close(fd) }
                var pos = last
                var buf = [UInt8](repeating: 0, count: 65536)
                scan: while true {
                    let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 65536, off_t(pos)) }
                    if n <= 0 { break }
                    if let i = buf[0..<n].firstIndex(of: 0x0A) { end = pos + Int64(i) + 1; break scan }
                    pos += Int64(n)
                }
            }
            if end == 0 { found.append("history log lacks the entry its index points to (seq \(h))") }
        }
        let logSize = FileSystem.size(logFile) ?? 0
        if end > 0 || h == 0, logSize > end {
            found.append("history log holds \(logSize - end) bytes after its last indexed entry (a write that was never acknowledged)")
            if repair { try FileSystem.truncate(logFile, to: end) }
        }
        return found
    }

    private func offset(of seq: Int64) throws -> Int64? {
        let fd = open(indexFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var b = [UInt8](repeating: 0, count: 8)
        let n = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 8, off_t((seq - 1) * 8)) }
        guard n == 8 else { return nil }
        return b.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
