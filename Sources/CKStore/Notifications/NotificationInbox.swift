import CKJSON
import CKModel

/// One device's notifications: `log.ndjson` (an AppendLog: one `{seq, notification}` line per
/// notification delivered) and `state.json`, which commits the log — only its first `logSize`
/// bytes exist; anything after is what an interrupted delivery left, cut by the next one — and
/// says how far the device has read, which unread database and zone notifications later ones
/// coalesce into, how far each source (a zone's history) has been delivered, so a delivery
/// that is redone after a crash is not delivered twice, and which notifications were dropped
/// (`ck notifications drop`): their lines stay in the append-only log, never to be listed.
package struct NotificationInbox {
    package let directory: String
    static let logName = "log.ndjson"
    static let stateName = "state.json"
    var logFile: String { directory + "/" + NotificationInbox.logName }
    var stateFile: String { directory + "/" + NotificationInbox.stateName }
    var lockFile: String { directory + "/lock" }

    /// The log as far as `state` commits it.
    package func log(_ state: State) -> AppendLog {
        AppendLog(directory: directory, name: NotificationInbox.logName, commit: .recorded(end: state.logSize), noun: "notification log")
    }

    /// Each committed `{seq, notification}` line from `offset` on, and the offset after it;
    /// `body` returns false to stop. A line that does not parse is skipped.
    private func forEachLine(_ st: State, from offset: Int64, _ body: (Int64?, JSONValue?, Int64) throws -> Bool) throws {
        try log(st).forEachEntry(from: offset) { bytes, end in
            let j = try? JSONParser.parse(Array(bytes))
            return try body(j?["seq"]?.int64Value, j?["notification"], end)
        }
    }

    package struct State {
        package var head: Int64 = 0
        var logSize: Int64 = 0
        var readThrough: Int64 = 0
        var readOffset: Int64 = 0
        /// Coalescing key → seq of the newest notification delivered under it.
        package var latest: [String: Int64] = [:]
        /// Source (a zone history) → its last entry delivered here.
        var sources: [String: Int64] = [:]
        /// The seqs of dropped notifications, as sorted, disjoint ranges.
        package var dropped: [ClosedRange<Int64>] = []
        /// The app's badge count: raised by each notification of a subscription with
        /// `shouldBadge`, which carries it as `badge`; cleared when the device reads them.
        package var badge: Int64 = 0
        /// When a web client's push token made this inbox (ms; ck serve): a user keeps the
        /// inboxes of their newest web clients only.
        package var registered: Int64?

        package init() {}

        package init(json j: JSONValue) {
            head = j["head"]?.int64Value ?? 0
            logSize = j["logSize"]?.int64Value ?? 0
            readThrough = j["readThrough"]?.int64Value ?? 0
            readOffset = j["readOffset"]?.int64Value ?? 0
            badge = j["badge"]?.int64Value ?? 0
            registered = j["registered"]?.int64Value
            for (k, v) in j["latest"]?.objectValue ?? [:] { latest[k] = v.int64Value }
            for (k, v) in j["sources"]?.objectValue ?? [:] { sources[k] = v.int64Value }
            for r in j["dropped"]?.arrayValue ?? [] {
                if let p = r.arrayValue, p.count == 2, let a = p[0].int64Value, let b = p[1].int64Value, a <= b { dropped.append(a...b) }
            }
        }

        func isDropped(_ seq: Int64) -> Bool { dropped.contains { $0.contains(seq) } }

        /// Adds seqs to `dropped`, keeping it sorted and merged.
        package mutating func drop(_ seqs: [Int64]) {
            var merged: [ClosedRange<Int64>] = []
            for r in (dropped + seqs.map { $0...$0 }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let l = merged.last, r.lowerBound <= l.upperBound + 1 {
                    merged[merged.count - 1] = l.lowerBound...max(l.upperBound, r.upperBound)
                } else {
                    merged.append(r)
                }
            }
            dropped = merged
        }

        package var json: JSONValue {
            var o: [String: JSONValue] = [
                "schemaVersion": .int(FileFormat.schemaVersion), "head": .int(head), "logSize": .int(logSize), "readThrough": .int(readThrough),
                "readOffset": .int(readOffset), "latest": .object(latest.mapValues { .int($0) }), "sources": .object(sources.mapValues { .int($0) }),
            ]
            if !dropped.isEmpty { o["dropped"] = .array(dropped.map { [.int($0.lowerBound), .int($0.upperBound)] }) }
            if badge > 0 { o["badge"] = .int(badge) }
            if let r = registered { o["registered"] = .int(r) }
            return .object(o)
        }
    }

    /// A notification about to be delivered; `coalesceKey` is set for database and zone
    /// notifications, which fold into an unread one with the same key. `seq`: the history entry
    /// of the change it tells of, within its delivery's source.
    package struct Pending {
        package var notification: [String: JSONValue]
        var coalesceKey: String?
        package var seq: Int64? = nil
        /// Its subscription's `shouldBadge`: the push raises the app's badge count.
        package var badges = false
    }

    package func state() throws -> State { try FileSystem.readJSON(stateFile).map(State.init(json:)) ?? State() }

    /// `state.json`, changed under the inbox's lock; nil when the device is not registered.
    private var stateDocument: LockedDocument<State?> {
        LockedDocument(stateFile, lock: lockFile, decode: { $0.map(State.init(json:)) }, encode: { $0?.json })
    }

    package func withLock<T>(_ body: () throws -> T) throws -> T { try stateDocument.withLock(body) }

    /// Makes the device known, so changes made from now on notify it.
    package func register() throws {
        if try FileSystem.exists(stateFile) { return }
        try stateDocument.update { st in if st == nil { st = State() } }
    }

    /// Takes back a registration nothing has used yet (a subscription that failed to save).
    func unregisterIfUntouched() throws {
        try stateDocument.update { st in
            if let s = st, s.head == 0 && s.logSize == 0 && s.sources.isEmpty && s.readOffset == 0 { st = nil }
        }
    }

    /// Whether the device is registered (has an inbox).
    package var isRegistered: Bool { (try? FileSystem.exists(stateFile)) == true }

    /// Dates a registered inbox as a web client's, made (or made again) at `ms`.
    package func markRegistered(at ms: Int64) throws {
        try stateDocument.update { st in st?.registered = ms }
    }

    /// Removes the inbox, under its lock: a delivery waiting for it then finds it unregistered.
    package func remove() throws {
        try withLock { try FileSystem.removeTree(directory) }
    }

    /// Delivers notifications, unless `source` says this inbox already has them: a delivery
    /// redone from further back than the last one (the record files of a zone are brought up to
    /// date again from an older cursor after the machine restarts) brings only the items after
    /// the inbox's mark for that source. When
    /// `dropped()` (asked under the inbox's lock, once the delivery is known to be new) says so,
    /// they are lost on the way, as a push can be: nothing is written to the log and nothing
    /// coalesces into them, but the source still counts as delivered, so no redo brings them.
    package func deliver(_ items: [Pending], source: (key: String, seq: Int64)? = nil, dropped: () throws -> Bool = { false }) throws {
        guard !items.isEmpty else { return }
        try stateDocument.update { stored in
            // Removed since the caller looked (a web client's inbox retired): not made again.
            guard var st = stored else { return }
            let mark = source.map { st.sources[$0.key] ?? 0 } ?? 0
            if let s = source, mark >= s.seq { return }
            let fresh = source == nil ? items : items.filter { ($0.seq ?? .max) > mark }
            let lost = try dropped()
            var lines: [[UInt8]] = []
            for item in fresh where !lost {
                if let k = item.coalesceKey, let s = st.latest[k], s > st.readThrough { continue }
                st.head += 1
                var n = item.notification
                n["notificationID"] = .string(Identifiers.newRecordName())
                if item.badges {
                    st.badge += 1
                    n["badge"] = .int(st.badge)
                }
                lines.append(Array(JSONWriter.compact(["seq": .int(st.head), "notification": .object(n)]).utf8))
                if let k = item.coalesceKey { st.latest[k] = st.head }
            }
            if let s = source { st.sources[s.key] = s.seq }
            if lost && source == nil { return }
            // Appended after the committed bytes (what an interrupted delivery left is cut),
            // then committed by recording the new end in state.json.
            if !lines.isEmpty { st.logSize = try log(st).append(lines).end }
            stored = st
        }
    }

    /// Where the unread notifications start.
    package func unreadOffset() throws -> Int64 { try state().readOffset }

    /// Complete notifications from a byte offset on, up to the committed end, and the offset
    /// after the last one.
    /// `limit`: at most that many notifications; the end is then after the last one returned.
    package func read(from offset: Int64, limit: Int? = nil) throws -> (notifications: [JSONValue], end: Int64) {
        let st = try state()
        var out: [JSONValue] = []
        var end = offset
        guard limit.map({ $0 > 0 }) ?? true else { return (out, end) }
        try forEachLine(st, from: offset) { seq, note, after in
            if let note, !(seq.map(st.isDropped) ?? false) { out.append(note) }
            end = after
            return out.count < (limit ?? Int.max)
        }
        return (out, end)
    }

    /// Drops the newest `count` unread notifications (every unread one when nil), as if their
    /// pushes had been lost: they are never listed, later changes do not coalesce into them
    /// (the next change notifies afresh), and the changes they told of stay in the feeds.
    /// Returns them, oldest first. Their log lines stay (the log is append-only); `state.json`
    /// records their seqs, in one atomic write.
    package func drop(newest count: Int?) throws -> [JSONValue] {
        // An unknown device has nothing to drop, and stays unknown.
        guard isRegistered else { return [] }
        return try stateDocument.update { stored in
            guard var st = stored else { return [] }
            var unread: [(seq: Int64, note: JSONValue)] = []
            try forEachLine(st, from: st.readOffset) { seq, note, _ in
                if let seq, let note, !st.isDropped(seq) { unread.append((seq, note)) }
                return true
            }
            let chosen = count.map { Array(unread.suffix($0)) } ?? unread
            guard !chosen.isEmpty else { return [] }
            let seqs = Set(chosen.map(\.seq))
            st.drop(chosen.map(\.seq))
            // Nothing coalesces into a notification that never arrived.
            for (k, v) in st.latest where seqs.contains(v) { st.latest[k] = nil }
            stored = st
            return chosen.map(\.note)
        }
    }

    /// Marks everything before `offset` (an end returned by `read`) read.
    package func markRead(through offset: Int64) throws {
        try stateDocument.update { stored in
            guard var st = stored else { return }
            // A log shorter than the offset (damaged) marks nothing.
            guard offset > st.readOffset, offset <= st.logSize, try FileSystem.size(logFile) ?? 0 >= offset else { return }
            // Seqs are consecutive, so the lines read say how far readThrough moves.
            var lines: Int64 = 0
            try forEachLine(st, from: st.readOffset) { _, _, end in
                guard end <= offset else { return false }
                lines += 1
                return end < offset
            }
            st.readThrough += lines
            st.readOffset = offset
            // Read, as an app clears its badge once it has seen what was new.
            st.badge = 0
            stored = st
        }
    }

    /// Cuts log bytes beyond the committed end (`ck fsck`); returns what it found.
    func cutUncommittedTail(repair: Bool) throws -> [AppendLog.TailFinding] {
        func cut() throws -> [AppendLog.TailFinding] { try log(try state()).cutTail(repair: repair) }
        if repair { return try withLock(cut) }
        let lock = try FileLock.acquireExisting(lockFile)
        defer { lock?.unlock() }
        return try cut()
    }

    package init(directory: String) {
        self.directory = directory
    }
}
