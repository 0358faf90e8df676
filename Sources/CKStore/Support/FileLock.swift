import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock (flock) on a lock file, held until `unlock` or deinit. Concurrent `ck`
/// processes take turns here. The lock is re-checked once held: if the file was replaced or
/// removed meanwhile (its zone deleted, or deleted and made again), the lock is on a file that
/// no longer guards anything, so it is taken again on the current one.
package final class FileLock {
    package enum Mode { case shared, exclusive }
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lock at `path`, creating the file (0600) and, with `createDirectory`, its
    /// directory. Nil when the directory does not exist (and is not to be created).
    static func acquire(_ path: String, _ mode: Mode = .exclusive, createDirectory: Bool = true) throws -> FileLock? {
        while true {
            guard let (dir, leaf) = try Directory.parent(of: path, create: createDirectory) else { return nil }
            let (fd, held) = try dir.openForWritingWithStatus(leaf)
            while flock(fd, mode == .shared ? LOCK_SH : LOCK_EX) != 0 {
                if errno == EINTR { continue }
                let e = FileSystem.failure("cannot lock", path)
                close(fd)
                throw e
            }
            // Still the file at `path`? Looked up afresh by the whole path: the directory itself
            // may have moved. Only the identity is compared (nothing is opened or written through
            // the path), so one `lstat` does: a link on the way can only lead to this same file.
            var cur = stat()
            let current: stat?
            if lstat(path, &cur) == 0 {
                current = cur
            } else if errno == ENOENT {
                current = nil
            } else {
                // A path `lstat` cannot take (longer than PATH_MAX, which the walk a component at a
                // time allows; a directory without search permission): looked up as it was opened,
                // which says what is wrong rather than taking the lock again for ever.
                do { current = try Directory.parent(of: path).flatMap { $0.0.status(of: leaf) } } catch { close(fd); throw error }
            }
            if let c = current, c.st_ino == held.st_ino && c.st_dev == held.st_dev {
                return FileLock(fd: fd)
            }
            close(fd)
            if !createDirectory, try Directory.parent(of: path) == nil { return nil }
        }
    }

    /// Takes the lock only if its file exists (nil otherwise): for readers such as
    /// `ck fsck --dry-run`, which must not create anything.
    static func acquireExisting(_ path: String, _ mode: Mode = .exclusive) throws -> FileLock? {
        guard let (dir, leaf) = try Directory.parent(of: path), dir.kind(of: leaf) == .file else { return nil }
        return try acquire(path, mode, createDirectory: false)
    }

    /// Takes an exclusive lock only if nobody holds it; nil otherwise.
    static func attempt(_ path: String) throws -> FileLock? {
        guard let (dir, leaf) = try Directory.parent(of: path, create: true) else { return nil }
        let fd = try dir.openForWriting(leaf)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            if e == EWOULDBLOCK { return nil }
            throw FileSystem.failure("cannot lock", path, errno: e)
        }
        return FileLock(fd: fd)
    }

    /// Takes the lock at `path`, creating its directory if needed.
    package convenience init(path: String, _ mode: Mode = .exclusive) throws {
        let l = try FileLock.acquire(path, mode, createDirectory: true)!
        self.init(fd: l.fd)
        l.fd = -1
    }

    package func unlock() {
        if fd >= 0 { flock(fd, LOCK_UN); close(fd); fd = -1 }
    }

    deinit { unlock() }
}
