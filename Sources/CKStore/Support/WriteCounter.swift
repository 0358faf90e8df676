import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One counter of the writes the user's ck processes make to any data directory, shared
/// through a word of shared memory (`/dev/shm/ck-writes-<uid>`, 0600). Every primitive that
/// changes a file or a directory entry (Directory, FileSystem, AppendLog) advances it after the
/// change. A long-lived server then takes a small file it keeps (StampedFiles) as unchanged
/// while the counter has not moved: one load from memory where it made an `lstat` of each file
/// a request reads (tokens, session, account, faults, zone, cursor, record: eleven for a
/// lookup).
///
/// The counter only ever says "something may have changed": a write to another data directory
/// advances it too, and costs a server nothing but the `lstat`s it made before. What it cannot
/// see — a file edited by hand, a write by another user or from another `/dev/shm` — a server
/// sees once the stamp is checked again, at most `StampedFiles.trustNanos` later.
///
/// Without `/dev/shm` (or when the word is not this user's own regular file), there is no
/// counter: every read checks its stamp, as it always did.
package final class WriteCounter: @unchecked Sendable {
    /// The user's counter, shared by their ck processes; nil without one.
    package static let shared: WriteCounter? = map()

    private let word: UnsafeMutablePointer<Atomic<UInt64>>

    private init(word: UnsafeMutablePointer<Atomic<UInt64>>) { self.word = word }

    /// A counter of this process's own (tests: writes it is told of, and no others).
    package static func unshared() -> WriteCounter {
        let p = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        p.initialize(to: Atomic(0))
        return WriteCounter(word: p)
    }

    private static func map() -> WriteCounter? {
        let path = "/dev/shm/ck-writes-\(geteuid())"
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(),
              st.st_mode & 0o077 == 0 else { return nil }
        let size = MemoryLayout<UInt64>.size
        if st.st_size < size, ftruncate(fd, off_t(size)) != 0 { return nil }
        guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        return WriteCounter(word: p.bindMemory(to: Atomic<UInt64>.self, capacity: 1))
    }

    /// After a change to a file or a directory entry: whoever checked a file before it must
    /// check it again. Sequentially consistent: the change (a system call that returned) is
    /// ordered before the new value for every reader.
    @inline(__always)
    package func advance() {
        word.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// The counter now. Read before checking a file: a file checked after reading `n` is at
    /// least as new as every write counted in `n`.
    @inline(__always)
    package func current() -> UInt64 {
        word.pointee.load(ordering: .sequentiallyConsistent)
    }

    /// What every primitive that changes a file calls after the change.
    @inline(__always)
    static func advance() { shared?.advance() }
}
