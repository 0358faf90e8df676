import CKJSON
import CKModel
import Foundation
import Synchronization
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
/// stamp as it was ("racy git"); where they keep whole seconds (no nanoseconds in the stamp),
/// within the last two seconds. Kept only once its change time is safely in the past, a file's
/// next change always shows in its stamp.
///
/// A server (`trustWriteCounter`) does not even `lstat` a file it kept while no ck process has
/// written a file of its name, or moved a tree, since it last checked it (WriteCounter), for
/// at most `trustNanos`: a file changed behind ck's back (by hand) is seen that much later,
/// never more. Absent files are kept the same way: most requests ask for a `faults.json` or
/// `reset.json` that is not there.
final class StampedFiles: @unchecked Sendable {
    package static let shared = StampedFiles()

    struct Stamp: Equatable {
        package var device: UInt64, inode: UInt64, size: Int64
        package var modified: Int64, modifiedNanos: Int64, changed: Int64, changedNanos: Int64
    }

    /// What was made of each file, by kind of reading: JSON, a listing, a parsed schema, a
    /// record. Each kind has its own bound; past it, that kind starts afresh.
    private enum Kind: UInt64 { case json, listing, vouchedListing, parsed, record, historyHead, presence }
    /// A file and the kind of reading, with its hash taken once, outside any lock: a server's
    /// threads ask for the same few long paths thousands of times a second.
    private struct Key: Hashable {
        let kind: Kind, path: String, hash: Int
        init(kind: Kind, path: String) {
            self.kind = kind
            self.path = path
            // FNV-1a over the path's bytes: a tenth of SipHash's cost over a long path, and
            // the paths are ck's own (no one chooses them to collide).
            var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ kind.rawValue
            func mix(_ bytes: UnsafeBufferPointer<UInt8>) { for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 } }
            if path.utf8.withContiguousStorageIfAvailable(mix) == nil {
                for b in path.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            }
            hash = Int(truncatingIfNeeded: h ^ (h >> 29))
        }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
        static func == (a: Key, b: Key) -> Bool { a.hash == b.hash && a.kind == b.kind && a.path == b.path }
    }
    /// What is kept of a file: its stamp (nil: it was absent) and what was made of it, and when
    /// it was last checked — the write counter (and where it stood) before the check, and the
    /// monotonic clock.
    private struct Entry {
        var stamp: Stamp?
        /// A `Box` of what was made, or `absent`: a class, so that finding it again is a
        /// pointer compare, not the dynamic cast of an `Any` (a few percent of a lookup).
        var value: AnyObject
        var counted: Counted?
        var checked: Int64
    }
    private final class Box<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }
    private final class Absent: Sendable {}
    private static let absent = Absent()

    /// The kept entries, in stripes by their key's hash, each with its own lock, which readers
    /// share: a server's sixteen threads each ask several times per request, mostly for the
    /// same few files, and one plain lock for all made them queue (a futex call for most
    /// requests).
    private final class Stripe: @unchecked Sendable {
        let lock = ReadWriteLock()
        var kept: [Key: Entry] = [:]
        var counts: [Kind: Int] = [:]
    }
    private static let stripeCount = 16
    private let stripes = (0..<StampedFiles.stripeCount).map { _ in Stripe() }
    private func stripe(_ key: Key) -> Stripe {
        stripes[Int(UInt(bitPattern: key.hash) % UInt(Self.stripeCount))]
    }

    /// A store has a handful of such files; records are bounded by count and size below. The
    /// bounds are the stripes' together.
    private let most = 4096
    /// Small record files read by lookups: at most `mostRecords` of at most `smallFile` bytes
    /// each (≤ 8 MiB in all), so the cache never costs a server more than that.
    static let smallFile: Int64 = 8192
    private let mostRecords = 1024

    /// What is set once by a long-lived server, and read (but for `keepsRecords`) only on the
    /// way to a check.
    private let stateLock = NSLock()
    /// Whether record files are kept (`record`): set, for good, by a long-lived server.
    private let keepsRecords = Atomic<Bool>(false)
    /// The write counter whose standing still stands for a check (see above), and the data
    /// directories where it does (each ending in "/"): set, for good, by a long-lived server
    /// for its own data directory. Elsewhere in the process (a test's other stores) every read
    /// checks its stamp.
    private var trusted: WriteCounter?
    private var trustedRoots: [String] = []

    /// How long an unmoved write counter stands for a check: the most a change made behind
    /// ck's back goes unseen (`trustNanos`, this by default; a test chooses its own).
    static let defaultTrustNanos: Int64 = 250_000_000
    let trustNanos: Int64

    init(trustNanos: Int64 = StampedFiles.defaultTrustNanos) {
        self.trustNanos = trustNanos
    }

    package func keepRecords() {
        keepsRecords.store(true, ordering: .releasing)
    }

    package func trustWriteCounter(under root: String, _ counter: WriteCounter? = WriteCounter.shared) {
        stateLock.lock()
        trusted = counter
        let root = root.hasSuffix("/") ? root : root + "/"
        if !trustedRoots.contains(root) { trustedRoots.append(root) }
        stateLock.unlock()
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

    /// How long a stamp without nanoseconds stays racy: a file system whose times keep whole
    /// seconds (ext3, ext4 with small inodes, HFS+; FAT's modification time keeps two) shows a
    /// change as made at the start of its tick, and a second change in that tick — a cursor
    /// written in place, an entry added to a directory — leaves the stamp as it was.
    static let coarseRacyWindowNanos: Int64 = 2_000_000_000 + racyWindowNanos

    /// Whether a file with `stamp` changed too recently to be kept (see above).
    static func isRacy(_ stamp: Stamp, now nowNanos: Int64 = realTimeNanos()) -> Bool {
        let window = stamp.changedNanos == 0 && stamp.modifiedNanos == 0 ? coarseRacyWindowNanos : racyWindowNanos
        return stamp.changed * 1_000_000_000 + stamp.changedNanos > nowNanos - window
    }

    static func realTimeNanos() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    private static func monotonicNanos() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// When the counters' file was last found to be the one new ck processes map.
    private var identityChecked: Int64 = 0

    /// Where the write counters of `path` stand, read before a check of it; nil when they are
    /// not trusted there (or there are none). At most once per `trustNanos`, whether the file
    /// mapped is still the one every new ck process maps: one removed (systemd-logind's
    /// RemoveIPC at logout, a cleaner) or replaced would never move again, so it is trusted no
    /// more, and every read checks its stamp. (Every kept entry is checked again within
    /// `trustNanos` anyway, and only then asks here.)
    private func counter(_ path: String) -> Counted? {
        stateLock.lock()
        var counter = trusted
        let roots = trustedRoots
        if let c = counter, Self.monotonicNanos() - identityChecked >= trustNanos {
            identityChecked = Self.monotonicNanos()
            if !c.stillShared() { c.distrust(); trusted = nil; counter = nil }
        }
        stateLock.unlock()
        guard let counter, counter.isTrusted, roots.contains(where: { path.utf8.starts(with: $0.utf8) }) else { return nil }
        return Counted(counter: counter, mark: counter.mark(slot: WriteCounter.slot(WriteCounter.name(of: path))))
    }

    /// A write counter and where it stood before a check.
    private struct Counted {
        let counter: WriteCounter
        let mark: WriteCounter.Mark
    }

    /// What is kept of the file, when no write was counted since it was checked (and that was
    /// less than `trustNanos` ago, and the counter is still trusted). The entry knows its
    /// counter: nothing is hashed, and no lock but its stripe's is taken.
    private func vouched(_ key: Key) -> Entry? {
        let s = stripe(key)
        guard let e = s.lock.reading({ s.kept[key] }), let counted = e.counted, counted.counter.isTrusted,
              Self.monotonicNanos() - e.checked < trustNanos, counted.counter.mark(slot: counted.mark.slot) == counted.mark else { return nil }
        return e
    }

    /// Keeps `entry`, within its kind's bound.
    private func keep(_ key: Key, _ entry: Entry) {
        let s = stripe(key)
        let bound = (key.kind == .record ? mostRecords : most) / Self.stripeCount
        s.lock.writing {
            if s.kept[key] == nil {
                if s.counts[key.kind, default: 0] >= bound {
                    s.kept = s.kept.filter { $0.key.kind != key.kind }
                    s.counts[key.kind] = 0
                }
                s.counts[key.kind, default: 0] += 1
            }
            s.kept[key] = entry
        }
    }

    /// Keeps that the file is absent, when the counter is trusted (it alone can say that a file
    /// since made is there: an absent file has no stamp).
    private func keepAbsent(_ key: Key, _ counted: Counted?) {
        guard let counted else { return }
        keep(key, Entry(stamp: nil, value: Self.absent, counted: counted, checked: Self.monotonicNanos()))
    }

    /// What `read` made of the file when it had `stamp`, or what it makes now, kept (when `keep`
    /// allows, and the file is not racy). The stamp is taken before the read: a file replaced
    /// in between is read again next time.
    private func cached<T>(_ key: Key, _ stamp: Stamp, _ counted: Counted?, keep keeps: (T) -> Bool = { _ in true },
                           _ read: () throws -> T) rethrows -> T {
        let s = stripe(key)
        let found: T? = s.lock.writing {
            guard var e = s.kept[key], e.stamp == stamp, let t = (e.value as? Box<T>)?.value else { return nil }
            if let counted {
                e.counted = counted
                e.checked = Self.monotonicNanos()
                s.kept[key] = e
            }
            return t
        }
        if let found { return found }
        let v = try read()
        guard keeps(v), !Self.isRacy(stamp) else { return v }
        keep(key, Entry(stamp: stamp, value: Box(v), counted: counted, checked: Self.monotonicNanos()))
        return v
    }

    /// The file's JSON, as `FileSystem.readJSON` reads it; nil when it does not exist.
    func readJSON(_ path: String) throws -> JSONValue? {
        let key = Key(kind: .json, path: path)
        if let e = vouched(key) { return (e.value as? Box<JSONValue?>)?.value ?? nil }
        let counted = counter(path)
        guard let stamp = Self.stamp(path) else {
            // Absent (the commonest: no faults armed): nothing to read. Anything else is left
            // to the careful read, which says what is wrong.
            if errno == ENOENT { keepAbsent(key, counted); return nil }
            return try FileSystem.readJSON(path)
        }
        return try cached(key, stamp, counted) { try FileSystem.readJSON(path) }
    }

    /// Whether nothing is at `path` (no `lstat` while the write counter vouches for it).
    func isAbsent(_ path: String) -> Bool {
        let key = Key(kind: .presence, path: path)
        if let e = vouched(key) { return e.value === Self.absent }
        let counted = counter(path)
        guard Self.stamp(path) == nil, errno == ENOENT else { return false }
        keepAbsent(key, counted)
        return true
    }

    /// The names in a directory, as `FileSystem.list` gives them, kept while the directory is
    /// the same (an entry added, removed or renamed in changes its times).
    package func list(_ path: String) throws -> [String] {
        let key = Key(kind: .listing, path: path)
        if let e = vouched(key), let names = (e.value as? Box<[String]>)?.value { return names }
        let counted = counter(path)
        guard let stamp = Self.stamp(path) else { return try FileSystem.list(path) }
        return try cached(key, stamp, counted) { try FileSystem.list(path) }
    }

    /// The names in a directory, kept only while the write counters vouch for it — at most
    /// `trustNanos` —, never by the directory's stamp: a directory keeps its inode, and often its
    /// size, when an entry is added, and on a file system whose times tick by the second a
    /// stamp could hide a new entry for good. Without trusted counters (a command), listed every
    /// time. A directory where a missed entry must be seen within `trustNanos` (`intents/`).
    func listWhileVouched(_ path: String) throws -> [String] {
        let key = Key(kind: .vouchedListing, path: path)
        if let e = vouched(key), let names = (e.value as? Box<[String]>)?.value { return names }
        // The mark before the listing: an entry made after it moves the counter past the mark.
        let counted = counter(path)
        let names = try FileSystem.list(path)
        if let counted { keep(key, Entry(stamp: nil, value: Box(names), counted: counted, checked: Self.monotonicNanos())) }
        return names
    }

    /// What `read` makes of the file (a parsed schema), kept while the file is the same one
    /// (and `keep` takes it); nil when the file does not exist.
    package func value<T>(_ path: String, keep: (T) -> Bool = { _ in true }, _ read: () throws -> T) throws -> T? {
        let key = Key(kind: .parsed, path: path)
        if let e = vouched(key) {
            if e.value === Self.absent { return nil }
            if let t = (e.value as? Box<T>)?.value { return t }
        }
        let counted = counter(path)
        guard let stamp = Self.stamp(path) else {
            if errno == ENOENT { keepAbsent(key, counted) }
            return nil
        }
        return try cached(key, stamp, counted, keep: keep, read)
    }

    /// A history's committed head (ChangeHistory.head), kept only when the index file held no
    /// word past it: the commit bit is set in place, so an index with an uncommitted tail can
    /// gain a commit without a new inode or size; one wholly committed cannot change but by
    /// growing, shrinking or being replaced. nil when there is no index file.
    func historyHead(_ indexPath: String, _ read: () throws -> Int64) rethrows -> Int64? {
        let key = Key(kind: .historyHead, path: indexPath)
        if let e = vouched(key), let head = (e.value as? Box<Int64>)?.value { return head }
        let counted = counter(indexPath)
        guard let stamp = Self.stamp(indexPath) else { return nil }
        return try cached(key, stamp, counted, keep: { $0 * 8 == stamp.size }, read)
    }

    /// A record file as `read` decodes it, kept while `lstat` shows the same file, when the file
    /// is small. nil (outer) when the file does not exist or is not kept: read it then. Only in
    /// a process that keeps records (`keepRecords`): elsewhere the stamp is an `lstat` a read
    /// pays for nothing — a command reads each record once (a page of a query, 200). The path
    /// is made only there too (7,000 instructions a record).
    package func record(_ makePath: @autoclosure () -> String, _ read: () throws -> Record?) throws -> Record?? {
        guard keepsRecords.load(ordering: .acquiring) else { return nil }
        let path = makePath()
        let key = Key(kind: .record, path: path)
        // A kept absence (nil) is served too: the box is bound, not its value.
        if let e = vouched(key), let box = e.value as? Box<Record?> { return .some(box.value) }
        let counted = counter(path)
        guard let stamp = Self.stamp(path), stamp.size <= Self.smallFile else { return nil }
        return .some(try cached(key, stamp, counted, read))
    }
}
