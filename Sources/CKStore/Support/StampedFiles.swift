import CKJSON
import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Small files read again and again by a long-lived process (`ck serve` reads the device's
/// account, the API tokens, a web session and the armed faults for every request), kept as
/// read — parsed — as long as the file is the same one: same inode, size, modification and
/// change times (`lstat`, so a link put in its place is a change, and is then refused by the
/// read). Every file read this way is written whole under a new name and renamed into place, so
/// a changed file is a new inode; another process's write is seen at the next read.
///
/// A file changed within the last `racyWindow` is read but not kept: file times tick coarsely
/// (a few milliseconds), so a second change in the same tick could leave every part of the
/// stamp as it was ("racy git"). Kept only once its change time is safely in the past, a file's
/// next change always shows in its stamp.
final class StampedFiles: @unchecked Sendable {
    package static let shared = StampedFiles()

    struct Stamp: Equatable {
        package var device: UInt64, inode: UInt64, size: Int64
        package var modified: Int64, modifiedNanos: Int64, changed: Int64, changedNanos: Int64
    }

    /// What was made of each file, by kind of reading: JSON, a listing, a parsed schema, a
    /// record. Each kind has its own bound; past it, that kind starts afresh.
    private enum Kind: Hashable { case json, listing, parsed, record, historyHead }
    private struct Key: Hashable { let kind: Kind; let path: String }

    private let lock = NSLock()
    private var kept: [Key: (Stamp, Any)] = [:]
    private var counts: [Kind: Int] = [:]
    /// A store has a handful of such files; records are bounded by count and size below.
    private let most = 4096
    /// Small record files read by lookups: at most `mostRecords` of at most `smallFile` bytes
    /// each (≤ 8 MiB in all), so the cache never costs a server more than that.
    static let smallFile: Int64 = 8192
    private let mostRecords = 1024

    /// Whether record files are kept (`record`): set, for good, by a long-lived server.
    private var keepsRecords = false

    package func keepRecords() {
        lock.lock()
        keepsRecords = true
        lock.unlock()
    }

    /// How long after its last change a file is still read afresh (see above).
    static let racyWindowNanos: Int64 = 20_000_000

    package static func stamp(_ path: String) -> Stamp? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Stamp(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                     modified: Int64(st.st_mtim.tv_sec), modifiedNanos: Int64(st.st_mtim.tv_nsec),
                     changed: Int64(st.st_ctim.tv_sec), changedNanos: Int64(st.st_ctim.tv_nsec))
    }

    /// Whether a file with `stamp` changed too recently to be kept (see above).
    static func isRacy(_ stamp: Stamp) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nowNanos = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        return stamp.changed * 1_000_000_000 + stamp.changedNanos > nowNanos - racyWindowNanos
    }

    /// What `read` made of the file when it had `stamp`, or what it makes now, kept (when `keep`
    /// allows, and the file is not racy). The stamp is taken before the read: a file replaced
    /// in between is read again next time.
    private func cached<T>(_ kind: Kind, _ path: String, _ stamp: Stamp, keep: (T) -> Bool = { _ in true },
                           _ read: () throws -> T) rethrows -> T {
        let key = Key(kind: kind, path: path)
        lock.lock()
        if let (s, v) = kept[key], s == stamp, let t = v as? T { lock.unlock(); return t }
        lock.unlock()
        let v = try read()
        guard keep(v), !Self.isRacy(stamp) else { return v }
        lock.lock()
        if kept[key] == nil {
            if counts[kind, default: 0] >= (kind == .record ? mostRecords : most) {
                kept = kept.filter { $0.key.kind != kind }
                counts[kind] = 0
            }
            counts[kind, default: 0] += 1
        }
        kept[key] = (stamp, v)
        lock.unlock()
        return v
    }

    /// The file's JSON, as `FileSystem.readJSON` reads it; nil when it does not exist.
    func readJSON(_ path: String) throws -> JSONValue? {
        guard let stamp = Self.stamp(path) else {
            // Absent (the commonest: no faults armed): nothing to read. Anything else is left
            // to the careful read, which says what is wrong.
            if errno == ENOENT { return nil }
            return try FileSystem.readJSON(path)
        }
        return try cached(.json, path, stamp) { try FileSystem.readJSON(path) }
    }

    /// The names in a directory, as `FileSystem.list` gives them, kept while the directory is
    /// the same (an entry added, removed or renamed in changes its times).
    package func list(_ path: String) throws -> [String] {
        guard let stamp = Self.stamp(path) else { return try FileSystem.list(path) }
        return try cached(.listing, path, stamp) { try FileSystem.list(path) }
    }

    /// What `read` makes of the file (a parsed schema), kept while the file is the same one;
    /// nil, uncached, when the file does not exist.
    package func value<T>(_ path: String, _ read: () throws -> T) throws -> T? {
        guard let stamp = Self.stamp(path) else { return nil }
        return try cached(.parsed, path, stamp, read)
    }

    /// A history's committed head (ChangeHistory.head), kept only when the index file held no
    /// word past it: the commit bit is set in place, so an index with an uncommitted tail can
    /// gain a commit without a new inode or size; one wholly committed cannot change but by
    /// growing, shrinking or being replaced. nil when there is no index file.
    func historyHead(_ indexPath: String, _ read: () throws -> Int64) rethrows -> Int64? {
        guard let stamp = Self.stamp(indexPath) else { return nil }
        return try cached(.historyHead, indexPath, stamp, keep: { $0 * 8 == stamp.size }, read)
    }

    /// A record file as `read` decodes it, kept while `lstat` shows the same file, when the file
    /// is small. nil (outer) when the file does not exist or is not kept: read it then. Only in
    /// a process that keeps records (`keepRecords`): elsewhere the stamp is an `lstat` a read
    /// pays for nothing — a command reads each record once (a page of a query, 200).
    package func record(_ path: String, _ read: () throws -> Record?) throws -> Record?? {
        lock.lock()
        let keeps = keepsRecords
        lock.unlock()
        guard keeps else { return nil }
        guard let stamp = Self.stamp(path), stamp.size <= Self.smallFile else { return nil }
        return .some(try cached(.record, path, stamp, read))
    }
}
