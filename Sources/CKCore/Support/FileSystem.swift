#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The few POSIX file operations the store is built on: atomic replace (temporary file, fsync,
/// rename, fsync of the directory), private permissions, advisory locks, streaming listings.
public enum FileSystem {
    public static let filePermissions: mode_t = 0o600
    public static let directoryPermissions: mode_t = 0o700

    static func posixError(_ what: String, _ path: String) -> CloudKitError {
        CloudKitError.internalError("\(what) '\(path)': \(String(cString: strerror(errno)))")
    }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates a directory and its missing parents, each 0700.
    public static func makeDirectories(_ path: String) throws {
        if isDirectory(path) { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectories(parent) }
        if mkdir(path, directoryPermissions) != 0 && errno != EEXIST { throw posixError("cannot create directory", path) }
    }

    /// Reads a whole file, or nil when it does not exist.
    public static func read(_ path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw posixError("cannot open", path)
        }
        defer { close(fd) }
        var st = stat()
        let size = fstat(fd, &st) == 0 ? max(Int(st.st_size), 0) : 0
        // Read straight into an array of the file's size; keep reading if it grew meanwhile.
        var out = try [UInt8](unsafeUninitializedCapacity: size) { buf, count in
            count = 0
            while count < size {
                let n = Glibc.read(fd, buf.baseAddress! + count, size - count)
                if n < 0 { if errno == EINTR { continue }; throw posixError("cannot read", path) }
                if n == 0 { break }
                count += n
            }
        }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
            if n < 0 { if errno == EINTR { continue }; throw posixError("cannot read", path) }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 { if errno == EINTR { continue }; throw posixError("cannot write", path) }
            off += n
        }
    }

    /// Replaces `path` atomically: the content goes to a temporary file in the same directory,
    /// is fsynced, renamed over `path`, and the directory entry is fsynced.
    ///
    /// With `durable: false` the fsyncs are left to the caller, who must make the bytes durable
    /// some other way (a write-ahead log written first, then `syncFileSystem`): a batch of
    /// many files then costs one sync instead of two per file.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], durable: Bool = true) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let tmp = dir + "/.tmp-" + temporarySuffix()
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, filePermissions)
        if fd < 0 { throw posixError("cannot create", tmp) }
        do {
            try writeAll(fd, bytes, path: tmp)
            if durable && fsync(fd) != 0 { throw posixError("cannot fsync", tmp) }
            close(fd)
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        if rename(tmp, path) != 0 {
            let e = posixError("cannot rename into", path)
            unlink(tmp)
            throw e
        }
        if durable { syncDirectory(dir) }
    }

    /// A name no other process or thread uses: pid, a random per-process salt, a counter.
    static func temporarySuffix() -> String {
        tempLock.lock()
        defer { tempLock.unlock() }
        tempCounter += 1
        return String(getpid()) + "-" + tempSalt + "-" + String(tempCounter)
    }

    private static let tempLock = NSLock()
    nonisolated(unsafe) private static var tempCounter = 0
    private static let tempSalt = Identifiers.hex((0..<4).map { _ in UInt8.random(in: 0...255) })

    public static func writeJSON(_ path: String, _ value: JSONValue, durable: Bool = true) throws {
        try writeAtomically(path, Array(JSONWriter.pretty(value).utf8), durable: durable)
    }

    /// Flushes every pending write of the file system holding `path` (Linux `syncfs`; a full
    /// `sync` elsewhere): the one sync that makes a batch of non-durable writes durable.
    public static func syncFileSystem(_ path: String) {
        #if os(Linux)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = linuxSyncfs(fd)
            close(fd)
            return
        }
        #endif
        sync()
    }

    public static func readJSON(_ path: String) throws -> JSONValue? {
        guard let bytes = try read(path) else { return nil }
        do { return try JSONParser.parse(bytes) } catch {
            throw CloudKitError.internalError("corrupt file '\(path)': \(error) (run 'ck fsck')")
        }
    }

    public static func syncDirectory(_ dir: String) {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }

    /// Removes a file; a missing file is not an error.
    public static func remove(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw posixError("cannot remove", path) }
    }

    /// Removes a directory tree.
    public static func removeTree(_ path: String) throws {
        guard isDirectory(path) else { try remove(path); return }
        for name in try list(path) {
            let p = path + "/" + name
            if isDirectory(p) { try removeTree(p) } else { try remove(p) }
        }
        if rmdir(path) != 0 && errno != ENOENT { throw posixError("cannot remove directory", path) }
    }

    /// Directory entries (without `.` and `..`), sorted by bytes so listings are deterministic.
    public static func list(_ path: String) throws -> [String] {
        guard let d = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw posixError("cannot list", path)
        }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        names.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        return names
    }

    /// Appends bytes to a file (created 0600), then fsyncs it.
    public static func append(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, filePermissions)
        if fd < 0 { throw posixError("cannot open", path) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
        if fsync(fd) != 0 { throw posixError("cannot fsync", path) }
    }

    /// Cuts a file to `length` bytes and syncs it.
    public static func truncate(_ path: String, to length: Int64) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        if fd < 0 { throw posixError("cannot open", path) }
        defer { close(fd) }
        if ftruncate(fd, off_t(length)) != 0 { throw posixError("cannot truncate", path) }
        if fsync(fd) != 0 { throw posixError("cannot fsync", path) }
    }

    public static func size(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_size)
    }
}

/// An exclusive advisory lock (flock) on a lock file, held until `unlock` or deinit. Concurrent
/// `ck` processes writing the same zone take turns here.
public final class FileLock {
    private var fd: Int32

    public init(path: String) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, FileSystem.filePermissions)
        if fd < 0 { throw FileSystem.posixError("cannot open lock", path) }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let e = FileSystem.posixError("cannot lock", path)
            close(fd)
            throw e
        }
    }

    public func unlock() {
        if fd >= 0 { flock(fd, LOCK_UN); close(fd); fd = -1 }
    }

    deinit { unlock() }
}

#if os(Linux)
/// glibc's `syncfs(2)`, which the Glibc module does not export without _GNU_SOURCE.
@_silgen_name("syncfs")
private func linuxSyncfs(_ fd: Int32) -> Int32
#endif
