import CKCrypto
import CKJSON
import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX file operations the store is built on, by absolute path: each resolves its
/// directory through `Directory` (no link followed at any level), replaces files atomically
/// (temporary file, fsync, rename, fsync of the directory), creates them private (0600, 0700),
/// and reports a full disk as QUOTA_EXCEEDED. Files a user names on the command line (an
/// import file, a schema, an asset) are read with `readUserFile`, which follows links as any
/// tool would.
package enum FileSystem {
    static let filePermissions: mode_t = 0o600
    static let directoryPermissions: mode_t = 0o700

    // MARK: errors

    /// The error for a failed system call: a full disk is QUOTA_EXCEEDED (exit 8), anything
    /// else INTERNAL_ERROR naming the path.
    package static func failure(_ what: String, _ path: String, errno e: Int32 = errno) -> CloudKitError {
        if e == ENOSPC || e == EDQUOT {
            return CloudKitError(.quotaExceeded, "no space left on the device holding the data directory (\(what) '\(path)')")
        }
        return CloudKitError.internalError("\(what) '\(path)': \(String(cString: strerror(e)))")
    }

    static func symlink(_ path: String) -> CloudKitError {
        CloudKitError.internalError("refusing to follow the symbolic link '\(path)': ck never follows links inside a data directory (remove the link)").with(.repairDataDirectory)
    }

    /// What a file that is not a regular file is, in words ("a FIFO").
    package static func kindName(mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "a special file"
        }
    }

    static func notRegular(_ path: String, mode: mode_t) -> CloudKitError {
        CloudKitError.internalError("'\(path)' is \(kindName(mode: mode)), not a regular file: ck reads and writes only regular files inside a data directory (remove it)").with(.repairDataDirectory)
    }

    // MARK: path operations

    package static func exists(_ path: String) throws -> Bool {
        guard let (d, leaf) = try Directory.parent(of: path) else { return false }
        switch d.kind(of: leaf) {
        case nil: return false
        case .symlink?: throw symlink(path)
        default: return true
        }
    }

    static func isDirectory(_ path: String) throws -> Bool {
        guard let (d, leaf) = try Directory.parent(of: path) else { return false }
        switch d.kind(of: leaf) {
        case .directory?: return true
        case .symlink?: throw symlink(path)
        default: return false
        }
    }

    /// Creates a directory and its missing parents, each 0700.
    static func makeDirectories(_ path: String) throws { _ = try Directory.open(path, create: true) }

    /// Reads a whole file, or nil when it does not exist.
    package static func read(_ path: String) throws -> [UInt8]? {
        guard let (d, leaf) = try Directory.parent(of: path) else { return nil }
        return try d.read(leaf)
    }

    static func readJSON(_ path: String) throws -> JSONValue? {
        guard let (d, leaf) = try Directory.parent(of: path) else { return nil }
        return try d.readJSON(leaf)
    }

    static func writeAtomically(_ path: String, _ bytes: [UInt8], durable: Bool = true) throws {
        guard let (d, leaf) = try Directory.parent(of: path, create: true) else { return }
        try d.write(leaf, bytes, durable: durable)
    }

    static func writeJSON(_ path: String, _ value: JSONValue, durable: Bool = true) throws {
        try writeAtomically(path, Array(JSONWriter.pretty(value).utf8), durable: durable)
    }

    /// Creates `path` with `bytes` only if it does not exist: true if created.
    static func createExclusively(_ path: String, _ bytes: [UInt8]) throws -> Bool {
        guard let (d, leaf) = try Directory.parent(of: path, create: true) else { return false }
        let tmp = try d.prepare(bytes, durable: true)
        let made = try d.publishIfAbsent(tmp, as: leaf)
        if made { d.sync() }
        return made
    }

    /// Removes a file; a missing file is not an error.
    package static func remove(_ path: String) throws {
        guard let (d, leaf) = try Directory.parent(of: path) else { return }
        try d.remove(leaf)
    }

    /// Removes a directory tree without following links.
    static func removeTree(_ path: String) throws {
        guard let (d, leaf) = try Directory.parent(of: path) else { return }
        try d.removeTree(leaf)
    }

    /// Directory entries sorted by bytes; empty when the directory does not exist.
    package static func list(_ path: String) throws -> [String] {
        try Directory.open(path)?.entries() ?? []
    }

    package static func append(_ path: String, _ bytes: [UInt8]) throws {
        guard let (d, leaf) = try Directory.parent(of: path, create: true) else { return }
        try d.append(leaf, bytes)
    }

    static func truncate(_ path: String, to length: Int64) throws {
        guard let (d, leaf) = try Directory.parent(of: path) else { return }
        try d.truncate(leaf, to: length)
    }

    /// A file's size; nil when absent.
    package static func size(_ path: String) throws -> Int64? {
        guard let (d, leaf) = try Directory.parent(of: path), let st = d.status(of: leaf) else { return nil }
        if st.st_mode & S_IFMT == S_IFLNK { throw symlink(path) }
        return Int64(st.st_size)
    }

    static func setMode(_ path: String, _ mode: mode_t) throws {
        guard let (d, leaf) = try Directory.parent(of: path) else { return }
        try d.setMode(leaf, mode)
    }

    /// Reads a file the user named (an import, a schema, an asset): links are followed, as any
    /// tool would; a directory or an unreadable file is BAD_REQUEST.
    package static func readUserFile(_ path: String, shownAs shown: String) throws -> [UInt8] {
        let f = sysOpen(path, O_RDONLY | O_CLOEXEC)
        if f < 0 {
            let e = errno
            let why = e == ENOENT ? "no such file" : e == EACCES ? "permission denied" : String(cString: strerror(e)).lowercased()
            throw CloudKitError.badRequest("cannot read '\(Names.describe(shown))': \(why)")
        }
        defer { close(f) }
        var st = stat()
        if fstat(f, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR {
            throw CloudKitError.badRequest("cannot read '\(Names.describe(shown))': it is a directory")
        }
        do { return try readAll(f, path: shown) } catch let e as CloudKitError {
            throw CloudKitError.badRequest("cannot read '\(Names.describe(shown))': \(e.reason)")
        }
    }

    /// The bytes of a regular file that data names (an asset's `file://` downloadURL), handed
    /// to `chunk` piece by piece as they are read (to be hashed meanwhile). `directory` is
    /// reached as any path a user gives (links followed); each of `components` below it is
    /// opened without following a link. The file must be a regular file of exactly `size` bytes,
    /// checked before anything is read: a FIFO, a device or a file of another size is never
    /// read, and no more than `size` bytes (which the caller bounds) are ever held. A refusal
    /// is BAD_REQUEST whose reason is only what went wrong ("no such file"), for the caller to
    /// put in context.
    static func readRegularFile(_ directory: String, _ components: [String], size: Int64,
                                       chunk: (UnsafeRawBufferPointer) -> Void) throws -> [UInt8] {
        func refused(_ why: String) -> CloudKitError { CloudKitError.badRequest(why) }
        func why(_ e: Int32) -> String {
            e == ENOENT ? "no such file" : e == EACCES ? "permission denied" : String(cString: strerror(e)).lowercased()
        }
        guard size >= 0, size <= Int64(Int.max) else { throw refused("its size \(size) cannot be read") }
        var fd = sysOpen(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw refused(why(errno)) }
        var shown = ""
        for (i, name) in components.enumerated() {
            shown += (shown.isEmpty ? "" : "/") + name
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                close(fd)
                throw refused("'\(Names.describe(name))' is not a file name")
            }
            let last = i == components.count - 1
            let flags = (last ? O_RDONLY | O_NONBLOCK : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC
            var next: Int32
            repeat { next = openat(fd, name, flags) } while next < 0 && errno == EINTR
            if next < 0 {
                let e = errno
                let kind = Directory.kind(fd, name)
                close(fd)
                if kind == .symlink { throw refused("'\(Names.describe(shown))' is a symbolic link, which ck does not follow here") }
                if e == ENOTDIR { throw refused("'\(Names.describe(shown))' is not a directory") }
                throw refused(e == ENOENT ? "no such file" : "'\(Names.describe(shown))': \(why(e))")
            }
            close(fd)
            fd = next
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw refused(why(errno)) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw refused("it is \(kindName(mode: st.st_mode)), not a regular file") }
        guard Int64(st.st_size) == size else { throw refused("the file holds \(st.st_size) bytes, not the asset's size \(size)") }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }

        let total = Int(size), piece = 1 << 20
        var failed: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buf, count in
            count = 0
            while count < total {
                let n = Glibc.read(fd, buf.baseAddress! + count, min(piece, total - count))
                if n < 0 { if errno == EINTR { continue }; failed = errno; break }
                if n == 0 { break }
                chunk(UnsafeRawBufferPointer(start: buf.baseAddress! + count, count: n))
                count += n
            }
        }
        if failed != 0 { throw refused(why(failed)) }
        // Shorter or longer than it was when checked: it changed while being read.
        var extra: UInt8 = 0
        var n: Int
        repeat { n = Glibc.read(fd, &extra, 1) } while n < 0 && errno == EINTR
        guard bytes.count == total, n == 0 else { throw refused("the file changed while it was read") }
        return bytes
    }

    // MARK: descriptors

    static func sysOpen(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        return Glibc.open(path, flags)
        #else
        return Darwin.open(path, flags)
        #endif
    }

    static func readAll(_ fd: Int32, path: @autoclosure () -> String) throws -> [UInt8] {
        var st = stat()
        if fstat(fd, &st) != 0 { st = stat() }
        return try readAll(fd, status: st, path: path())
    }

    /// `status`: the file's, as `fstat` gave it after it was opened.
    static func readAll(_ fd: Int32, status st: stat, path: @autoclosure () -> String) throws -> [UInt8] {
        let size = max(Int(st.st_size), 0)
        let regular = st.st_mode & S_IFMT == S_IFREG
        // Straight into an array one byte longer than the file: once a regular file's size has
        // been read, that is the end (reads can come short — 2 GiB at most each — so they go
        // on until then); keep reading if it grew.
        var ended = false
        var out = try [UInt8](unsafeUninitializedCapacity: size + 1) { buf, count in
            count = 0
            while count < size + 1 {
                let n = Glibc.read(fd, buf.baseAddress! + count, size + 1 - count)
                if n < 0 { if errno == EINTR { continue }; throw failure("cannot read", path()) }
                if n == 0 { ended = true; break }
                count += n
                if regular, count == size { ended = true; break }
            }
        }
        if ended { return out }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
            if n < 0 { if errno == EINTR { continue }; throw failure("cannot read", path()) }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// Writes all bytes at the descriptor's position. Counts no write (WriteCounter): its
    /// callers write files not yet in place (`Directory.prepare`, a compaction's new history),
    /// which the rename that puts them there counts.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: @autoclosure () -> String) throws {
        var off = 0
        while off < bytes.count {
            if CrashPoints.fails("write " + path()) {
                // A filling disk takes part of a write before it refuses the rest.
                let half = (bytes.count - off) / 2
                if half > 0 { _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, half) } }
                throw failure("cannot write", path(), errno: ENOSPC)
            }
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 { if errno == EINTR { continue }; throw failure("cannot write", path()) }
            off += n
        }
    }

    /// Writes all bytes at `offset`; with `rollback`, a failure cuts the file back to `offset`.
    static func writeAt(_ fd: Int32, _ bytes: [UInt8], offset: Int64, path: String, rollback: Bool) throws {
        defer { WriteCounter.changedFile(path) }
        var off = 0
        do {
            while off < bytes.count {
                if CrashPoints.fails("write " + path) {
                    let half = (bytes.count - off) / 2
                    if half > 0 { _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + off, half, off_t(offset) + off_t(off)) } }
                    throw failure("cannot write", path, errno: ENOSPC)
                }
                let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + off, bytes.count - off, off_t(offset) + off_t(off)) }
                if n < 0 { if errno == EINTR { continue }; throw failure("cannot write", path) }
                off += n
            }
        } catch {
            if rollback { _ = ftruncate(fd, off_t(offset)) }
            throw error
        }
    }

    /// `overwrite`: the data synced only overwrote bytes already on disk, so no space is needed,
    /// and nothing but those bytes has to reach the disk: `fdatasync`, which leaves the file's
    /// times to the file system's own schedule instead of forcing a journal commit for them.
    static func fsync(_ fd: Int32, path: String, overwrite: Bool = false) throws {
        if CrashPoints.fails((overwrite ? "resync " : "fsync ") + path) || (overwrite ? Glibc.fdatasync(fd) : Glibc.fsync(fd)) != 0 {
            throw failure("cannot fsync", path)
        }
    }

    /// `fdatasync` of bytes appended (a log's commit): the data and the file's new length reach
    /// the disk, its times on the file system's own schedule (one journal commit fewer than
    /// `fsync` when only the length changed).
    static func datasync(_ fd: Int32, path: String) throws {
        if CrashPoints.fails("fsync " + path) || Glibc.fdatasync(fd) != 0 { throw failure("cannot fsync", path) }
    }

    /// Takes back bytes appended past `length` whose sync failed: cut, and the cut synced (as
    /// far as the disk still allows). A sync that failed may have written them all the same, and
    /// a power loss must not bring back — whole, checksummed, committed — what was reported
    /// failed; the cut's own sync makes the shorter length the one on disk.
    static func takeBack(_ fd: Int32, to length: Int64, path: String) {
        defer { WriteCounter.changedFile(path) }
        if CrashPoints.fails("truncate " + path) { return }
        _ = ftruncate(fd, off_t(length))
        if CrashPoints.fails("fsync " + path) { return }
        _ = Glibc.fdatasync(fd)
    }

    /// Overwrites bytes in place (no space needed: they exist already).
    package static func overwrite(_ fd: Int32, _ bytes: [UInt8], offset: Int64, path: String) throws {
        defer { WriteCounter.changedFile(path) }
        if CrashPoints.fails("overwrite " + path) { throw failure("cannot write", path) }
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress!, bytes.count, off_t(offset)) }
        if n != bytes.count { throw failure("cannot write", path) }
    }

    // MARK: temporary files

    /// `.tmp-<pid>-<salt>-<n>`: no other process or thread uses the name, and `ck fsck` can
    /// tell from the pid whether the writer is gone.
    static func temporaryName() -> String {
        tempLock.lock()
        defer { tempLock.unlock() }
        tempCounter += 1
        return temporaryPrefix + processID + "-" + tempSalt + "-" + String(tempCounter)
    }

    /// This process's pid, as temporary names carry it (ck never forks).
    private static let processID = String(getpid())

    static let temporaryPrefix = ".tmp-"

    /// The pid that made a temporary file, from its name.
    static func temporaryOwner(_ name: String) -> Int32? {
        guard name.hasPrefix(temporaryPrefix) else { return nil }
        return Int32(name.dropFirst(temporaryPrefix.count).prefix { $0 != "-" })
    }

    private static let tempLock = NSLock()
    nonisolated(unsafe) private static var tempCounter = 0
    private static let tempSalt = Hex.string((0..<4).map { _ in UInt8.random(in: 0...255) })
}
