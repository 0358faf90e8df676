import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ck gc`: compacting a zone's history, as CloudKit's server ages its own.
///
/// Sequence numbers never change (record change tags and tokens carry them). Compacting from
/// entry `F` keeps every entry from `F` on, and of the entries before it only those that wrote
/// a version still current at `F - 1` (the state a fetch from the start must return); the
/// others become empty slots in the index (a word equal to the one before it), so entry `seq`
/// is still found at `(seq - 1) * 8`. `history.json` records `retainedFrom: F`: a token (or a
/// reference) before `F - 1` names a point whose later changes can no longer be told, and is
/// CHANGE_TOKEN_EXPIRED — but for the pages of a fetch from scratch, which need only the
/// deletions gc dropped: `deletionsDroppedThrough` records the last one.
///
/// Crash safety, under the zone's lock:
/// 1. the new log and index are written beside the old ones (`history.log.gc`,
///    `history.idx.gc`) and fsynced;
/// 2. `history.json` gets `retainedFrom` (from here, tokens before it expire: the old files
///    still hold every entry, so nothing is misread);
/// 3. the marker `history.gc.json` is written, then both files are renamed into place, the
///    directory fsynced and the marker removed.
/// A crash before 3 leaves the old files (the aside ones are removed by the next writer); a
/// crash within 3 is finished by the next writer (`cutUncommittedTail`), which renames what
/// is left. A reader without the lock that opens the new index with the old log (or the
/// reverse) finds entries that do not match their index words — every entry is checked — and
/// reads again, waiting while the marker says a switch is under way: it never misreads.
package enum HistoryCompaction {
    static let markerName = "history.gc.json"
    static let newLog = "history.log.gc"
    static let newIndex = "history.idx.gc"

    /// The error of a read from a point inside the compacted part of a history.
    package static func compacted(_ directory: String, first: Int64) -> CloudKitError {
        CloudKitError(.changeTokenExpired, "the history in '\(directory)' no longer retains the changes before entry \(first) (it was compacted); read it from the start").with(.readRetainedHistory)
    }

    /// What one compaction did.
    package struct Result: Sendable {
        package var retainedFrom: Int64
        package var head: Int64
        /// Entries dropped by this compaction.
        package var dropped: Int64
        /// Entries before `retainedFrom` kept because they wrote a version current then.
        package var keptBase: Int64
        package var logBytesBefore: Int64
        package var logBytesAfter: Int64
    }

    /// Finishes (or clears away) a compaction a crash interrupted. The caller holds the lock.
    /// `sweep`: also remove the new files of a compaction interrupted before its marker (which
    /// nothing reads: every commit skips that look, `ck fsck` and the next compaction take them).
    static func finishInterrupted(_ h: ChangeHistory, _ dir: Directory, repair: Bool, sweep: Bool = true) throws -> ChangeHistory.TailFinding? {
        if dir.kind(of: markerName) != nil {
            if repair {
                if dir.kind(of: newIndex) != nil { try dir.rename(newIndex, to: ChangeHistory.indexName) }
                if dir.kind(of: newLog) != nil { try dir.rename(newLog, to: ChangeHistory.logName) }
                dir.sync()
                try dir.remove(markerName)
                dir.sync()
            }
            return .init(problem: "a history compaction (gc) was interrupted while switching files (finished)", repairable: true)
        }
        if sweep, dir.kind(of: newIndex) != nil || dir.kind(of: newLog) != nil {
            if repair {
                try dir.remove(newIndex)
                try dir.remove(newLog)
            }
            return .init(problem: "a history compaction (gc) was interrupted before it switched files (its new files removed)", repairable: true)
        }
        return nil
    }

    /// Compacts `h` so that every entry from `first` on is kept (see above). The caller holds
    /// the zone's lock and has brought the record files up to date with the history.
    package static func compact(_ h: ChangeHistory, retainFrom first: Int64) throws -> Result {
        try h.cutUncommittedTail()
        guard let dir = try Directory.open(h.directory) else {
            return Result(retainedFrom: 1, head: 0, dropped: 0, keptBase: 0, logBytesBefore: 0, logBytesAfter: 0)
        }
        let head = try h.committedHead(dir)
        let before = try h.retainedFrom()
        let target = min(max(first, 1), head.seq + 1)
        let logBefore = head.end
        guard target > before else {
            return Result(retainedFrom: before, head: head.seq, dropped: 0, keptBase: 0, logBytesBefore: logBefore, logBytesAfter: logBefore)
        }
        // 1. Which entries before `target` wrote a version still current at `target - 1`.
        var current: [NameKey: Int64] = [:]
        // Every deletion before `target` is dropped: the last one bounds which fetches from
        // scratch may read on through the compacted part (ChangeTokens.checkZone).
        var lastDeletion = try h.deletionsDroppedThrough()
        try h.forEachEntry(after: 0, through: target - 1) { e in
            current[e.key] = e.op == .save ? e.seq : nil
            if e.op == .delete { lastDeletion = max(lastDeletion, e.seq) }
            return true
        }
        let keep = Set(current.values)
        current = [:]

        // 2. The new files, beside the old ones.
        try dir.remove(newLog)
        try dir.remove(newIndex)
        guard let oldIdx = try dir.openFile(ChangeHistory.indexName), let oldLog = try dir.openFile(ChangeHistory.logName) else {
            throw CloudKitError.internalError("the history in '\(h.directory)' lost a file while it was compacted")
        }
        defer { close(oldIdx); close(oldLog) }
        let log = try dir.openForWriting(newLog)
        defer { close(log) }
        let idx = try dir.openForWriting(newIndex)
        defer { close(idx) }
        var dropped: Int64 = 0
        do {
            var oldAt: Int64 = 0, newAt: Int64 = 0
            var seq: Int64 = 0
            var logOut = [UInt8](), idxOut = [UInt8]()
            func flush() throws {
                try FileSystem.writeAll(log, logOut, path: h.directory + "/" + newLog)
                try FileSystem.writeAll(idx, idxOut, path: h.directory + "/" + newIndex)
                logOut.removeAll(keepingCapacity: true)
                idxOut.removeAll(keepingCapacity: true)
            }
            while seq < head.seq {
                let words = try h.log.readIndex(oldIdx, from: seq, count: min(head.seq - seq, 4096))
                if words.isEmpty { throw CloudKitError.internalError("the history index in '\(h.directory)' is shorter than its head") }
                for w in words {
                    seq += 1
                    let end = Int64(w & ~AppendLog.commitBit)
                    if end > oldAt && (seq >= target || keep.contains(seq)) {
                        var line = [UInt8](repeating: 0, count: Int(end - oldAt))
                        var got = 0
                        while got < line.count {
                            let n = line.withUnsafeMutableBytes { pread(oldLog, $0.baseAddress! + got, $0.count - got, off_t(oldAt) + off_t(got)) }
                            if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", h.logFile) }
                            if n == 0 { break }
                            got += n
                        }
                        guard got == line.count, line.last == 0x0A else {
                            throw CloudKitError.internalError("the history in '\(h.directory)' is damaged at entry \(seq)").with(.repairDataDirectory)
                        }
                        logOut += line
                        newAt += Int64(line.count)
                    } else if end > oldAt {
                        dropped += 1
                    }
                    oldAt = end
                    idxOut += AppendLog.indexWord(end: newAt, commits: w & AppendLog.commitBit != 0)
                    if logOut.count >= 1 << 20 { try flush() }
                }
            }
            try flush()
            try FileSystem.fsync(log, path: h.directory + "/" + newLog)
            try FileSystem.fsync(idx, path: h.directory + "/" + newIndex)
        } catch {
            try? dir.remove(newLog)
            try? dir.remove(newIndex)
            throw error
        }
        let logAfter = Int64(dir.status(of: newLog)?.st_size ?? 0)

        // 3. The retained start, then the switch.
        var meta = try FileSystem.readJSON(h.metaFile)?.objectValue ?? [:]
        meta["schemaVersion"] = .int(FileFormat.schemaVersion)
        meta["epoch"] = meta["epoch"] ?? .int(0)
        meta["retainedFrom"] = .int(target)
        meta["deletionsDroppedThrough"] = .int(lastDeletion)
        do {
            try FileSystem.writeJSON(h.metaFile, .object(meta))
            try dir.writeJSON(markerName, ["schemaVersion": .int(FileFormat.schemaVersion), "retainedFrom": .int(target)])
        } catch {
            try? dir.remove(newLog)
            try? dir.remove(newIndex)
            throw error
        }
        // Renames need no space: from here the switch completes, now or by the next writer.
        try dir.rename(newIndex, to: ChangeHistory.indexName)
        try dir.rename(newLog, to: ChangeHistory.logName)
        dir.sync()
        try dir.remove(markerName)
        dir.sync()
        return Result(retainedFrom: target, head: head.seq, dropped: dropped, keptBase: Int64(keep.count), logBytesBefore: logBefore, logBytesAfter: logAfter)
    }
}
