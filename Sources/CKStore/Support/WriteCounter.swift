import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Counters of the writes the user's ck processes make to any data directory, shared through
/// 8 KiB of shared memory (`/dev/shm/ck-writes-<uid>`, 0600). Every primitive that changes a
/// file or a directory entry (Directory, FileSystem, AppendLog) advances a counter after the
/// change. A long-lived server then takes a small file it keeps (StampedFiles) as unchanged
/// while its counters have not moved: two loads from memory where it made an `lstat` of each
/// file a request reads (tokens, session, account, faults, zone, cursor, record: eleven for a
/// lookup, ten more for a create).
///
/// The counters go by file name, the last component of a path, so that a write and a read name
/// the same file the same way however its directory was spelled: writing `zone.json` advances
/// the counter of every `zone.json` (and the entries of a directory, its listing's: the
/// counter of the directory's own name). A change that can move whole trees — a directory
/// made, removed or renamed, a rename of anything — advances counter 0, which every read checks
/// too. A counter only ever says "something may have changed": names share counters, and other
/// data directories move them; either costs a server only the `lstat`s it made before. What
/// no counter sees — a file edited by hand, a write by another user or from another
/// `/dev/shm` — a server sees once the stamp is checked again, at most
/// `StampedFiles.defaultTrustNanos` later.
///
/// Without `/dev/shm` (or when the file is not this user's own regular file, or `/dev/shm` is
/// full), there are no counters: every read checks its stamp, as it always did. A file removed
/// or replaced while a server runs is trusted no more (StampedFiles). One cut short while a
/// server has it mapped stops that server (SIGBUS at its next request), as a kill would: only
/// the user can do either.
package final class WriteCounter: @unchecked Sendable {
    /// The user's counters, shared by their ck processes; nil without them.
    package static let shared: WriteCounter? = map("/dev/shm/ck-writes-\(geteuid())")

    /// Counter 0 (trees) and the counters of names: 8 KiB, two pages.
    static let count = 1024

    /// Where a read stands: counter 0 and its name's counter (`slot`), as read before a check.
    package struct Mark: Equatable {
        let slot: Int
        let trees: UInt64, name: UInt64
    }

    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    /// The shared file mapped (nil: this process's own counters).
    private let identity: (path: String, device: UInt64, inode: UInt64)?
    /// Set once the file mapped was found removed or replaced (`distrust`): its counters may
    /// never move again, so no reader may take them for a check any more.
    private let distrusted = Atomic<Bool>(false)

    private init(words: UnsafeMutablePointer<Atomic<UInt64>>, identity: (path: String, device: UInt64, inode: UInt64)? = nil) {
        self.words = words
        self.identity = identity
    }

    /// Whether the file mapped is still the one every new ck process maps (not removed, e.g.
    /// by systemd-logind's RemoveIPC, and not replaced or cut short).
    package func stillShared() -> Bool {
        guard isTrusted, let identity else { return isTrusted }
        var st = stat()
        return lstat(identity.path, &st) == 0 && UInt64(st.st_dev) == identity.device && UInt64(st.st_ino) == identity.inode
            && st.st_size >= MemoryLayout<UInt64>.stride * Self.count
    }

    /// Whether the counters may still stand for a check (not `distrust`ed).
    package var isTrusted: Bool { !distrusted.load(ordering: .acquiring) }

    /// Takes the counters for a check no more, in every reader of this process.
    package func distrust() {
        distrusted.store(true, ordering: .releasing)
    }

    /// Counters of this process's own (tests: writes it is told of, and no others).
    package static func unshared() -> WriteCounter {
        let p = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
        for i in 0..<count { (p + i).initialize(to: Atomic(0)) }
        return WriteCounter(words: p)
    }

    /// The counters in the file at `path`, made if need be; nil when it is not this user's own
    /// regular file (0600), or there is no room for it.
    static func map(_ path: String) -> WriteCounter? {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(),
              st.st_mode & 0o077 == 0 else { return nil }
        let size = MemoryLayout<UInt64>.stride * count
        if st.st_size < size, ftruncate(fd, off_t(size)) != 0 { return nil }
        // The pages themselves, now: a full /dev/shm would otherwise be a SIGBUS at first touch.
        guard posix_fallocate(fd, 0, off_t(size)) == 0 else { return nil }
        guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        return WriteCounter(words: p.bindMemory(to: Atomic<UInt64>.self, capacity: count),
                            identity: (path, UInt64(st.st_dev), UInt64(st.st_ino)))
    }

    /// The counter of a name (1 ..< count): FNV-1a of its bytes.
    static func slot<S: StringProtocol>(_ name: S) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in name.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return 1 + Int(h % UInt64(count - 1))
    }

    /// The last component of a path.
    static func name(of path: String) -> Substring {
        guard let cut = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path[...] }
        return path[path.utf8.index(after: cut)...]
    }

    /// Sequentially consistent: the change (a system call that returned) is ordered before the
    /// new value for every reader.
    @inline(__always)
    package func advance(slot: Int) {
        (words + slot).pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// Where a read of `slot` stands. Read before checking a file: a file checked after is at
    /// least as new as every write counted here.
    @inline(__always)
    package func mark(slot: Int) -> Mark {
        Mark(slot: slot, trees: words.pointee.load(ordering: .sequentiallyConsistent),
             name: (words + slot).pointee.load(ordering: .sequentiallyConsistent))
    }

    // What the primitives call after a change.

    /// The bytes of the file at `path` changed (written in place, appended, cut).
    static func changedFile(_ path: String) {
        changedFile(named: name(of: path))
    }

    /// The bytes of a file of this name changed.
    static func changedFile<S: StringProtocol>(named name: S) {
        shared?.advance(slot: slot(name))
    }

    /// The entry `name` of the directory at `directory` was made, replaced or removed: the
    /// file and the directory's listing.
    static func changedEntry(_ name: String, in directory: String) {
        guard let c = shared else { return }
        c.advance(slot: slot(name))
        c.advance(slot: slot(Self.name(of: directory)))
    }

    /// A directory was made or removed, or something renamed (a directory, maybe): whatever
    /// was below a path may be something else now.
    static func changedTree() {
        shared?.advance(slot: 0)
    }
}
