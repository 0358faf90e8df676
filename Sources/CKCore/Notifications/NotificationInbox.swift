/// One device's notifications: `log.ndjson` (one `{seq, notification}` line per notification
/// delivered, append-only) and `state.json` (how far the device has read, and which unread
/// database and zone notifications later ones coalesce into).
public struct NotificationInbox {
    public let directory: String
    var logFile: String { directory + "/log.ndjson" }
    var stateFile: String { directory + "/state.json" }
    var lockFile: String { directory + "/lock" }

    struct State {
        var head: Int64 = 0
        var readThrough: Int64 = 0
        var readOffset: Int64 = 0
        /// Coalescing key → seq of the newest notification delivered under it.
        var latest: [String: Int64] = [:]

        init() {}

        init(json j: JSONValue) {
            head = j["head"]?.int64Value ?? 0
            readThrough = j["readThrough"]?.int64Value ?? 0
            readOffset = j["readOffset"]?.int64Value ?? 0
            for (k, v) in j["latest"]?.objectValue ?? [:] { latest[k] = v.int64Value }
        }

        var json: JSONValue {
            ["schemaVersion": .int(DataPaths.schemaVersion), "head": .int(head), "readThrough": .int(readThrough),
             "readOffset": .int(readOffset), "latest": .object(latest.mapValues { .int($0) })]
        }
    }

    /// A notification about to be delivered; `coalesceKey` is set for database and zone
    /// notifications, which fold into an unread one with the same key.
    struct Pending {
        var notification: [String: JSONValue]
        var coalesceKey: String?
    }

    func state() throws -> State { try FileSystem.readJSON(stateFile).map(State.init(json:)) ?? State() }

    func withLock<T>(_ body: () throws -> T) throws -> T {
        try FileSystem.makeDirectories(directory)
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        return try body()
    }

    /// Makes the device known, so changes made from now on notify it.
    public func register() throws {
        if FileSystem.exists(stateFile) { return }
        try withLock { if !FileSystem.exists(stateFile) { try FileSystem.writeJSON(stateFile, State().json) } }
    }

    func deliver(_ items: [Pending]) throws {
        guard !items.isEmpty else { return }
        try withLock {
            var st = try state()
            var lines = [UInt8]()
            for item in items {
                if let k = item.coalesceKey, let s = st.latest[k], s > st.readThrough { continue }
                st.head += 1
                var n = item.notification
                n["notificationID"] = .string(Identifiers.newRecordName())
                lines += Array(JSONWriter.line(["seq": .int(st.head), "notification": .object(n)]).utf8)
                if let k = item.coalesceKey { st.latest[k] = st.head }
            }
            guard !lines.isEmpty else { return }
            try FileSystem.append(logFile, lines)
            try FileSystem.writeJSON(stateFile, st.json)
        }
    }

    /// Where the unread notifications start.
    public func unreadOffset() throws -> Int64 { try state().readOffset }

    /// Complete notifications from a byte offset on, and the offset after the last one.
    public func read(from offset: Int64) throws -> (notifications: [JSONValue], end: Int64) {
        guard let size = FileSystem.size(logFile), size > offset else { return ([], offset) }
        let fd = open(logFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return ([], offset) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(size - offset))
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n > 0 else { return ([], offset) }
        bytes.removeLast(bytes.count - n)
        var out: [JSONValue] = []
        var start = 0
        while let nl = bytes[start...].firstIndex(of: 0x0A) {
            if let j = try? JSONParser.parse(Array(bytes[start..<nl])), let note = j["notification"] { out.append(note) }
            start = nl + 1
        }
        return (out, offset + Int64(start))
    }

    /// Marks everything before `offset` (an end returned by `read`) read.
    public func markRead(through offset: Int64) throws {
        try withLock {
            var st = try state()
            guard offset > st.readOffset, let size = FileSystem.size(logFile), offset <= size else { return }
            let fd = open(logFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: Int(offset - st.readOffset))
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(st.readOffset)) }
            guard n == bytes.count else { return }
            // Seqs are consecutive, so the lines read say how far readThrough moves.
            st.readThrough += Int64(bytes.lazy.filter { $0 == 0x0A }.count)
            st.readOffset = offset
            try FileSystem.writeJSON(stateFile, st.json)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
