import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open directory of the store, reached from `/` one component at a time without following
/// a symbolic link at any level: nothing inside a data directory is trusted (a project's `.ck/`
/// may come from a cloned repository), so a planted link is an error, never a way out. Every
/// file operation of the core goes through a `Directory`, relative to its descriptor.
package final class Directory {
    package let path: String
    package let fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    package enum Kind: Equatable { case file, directory, symlink, other }

    #if os(Linux)
    /// Linux's O_PATH: passing through a directory needs only search permission on it.
    static let passThrough: Int32 = 0o10000000
    #else
    static let passThrough: Int32 = O_RDONLY
    #endif

    // MARK: opening

    /// Opens the directory at an absolute path; nil when it (or a parent) does not exist and
    /// `create` is false. With `create`, missing directories are made (0700).
    package static func open(_ path: String, create: Bool = false) throws -> Directory? {
        guard path.utf8.first == UInt8(ascii: "/") else { throw FileSystem.failure("not an absolute path", path, errno: EINVAL) }
        let shown = path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") ? String(path.dropLast()) : path
        // The whole path in one call when the kernel can refuse links at every level itself;
        // anything but success or absence is left to the walk below, which names what it finds.
        // (Checked on the bytes: this runs for every file a request opens.)
        if isPlain(path) {
            switch openWhole(path) {
            case .opened(let fd): return Directory(path: shown, fd: fd)
            case .absent where !create: return nil
            default: break
            }
        }
        // Split on the contiguous bytes: split by Characters, each component cost its length in
        // grapheme breaking, 30,000 instructions a path, and the generic `split` of the bytes
        // 5,000 (where `openat2` is missing: older kernels, some sandboxes, valgrind).
        let parts = components(of: path)
        var fd = FileSystem.sysOpen("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw FileSystem.failure("cannot open", "/") }
        var at = ""
        for (i, name) in parts.enumerated() {
            let last = i == parts.count - 1
            let next = try openChild(fd, at, name, create: create, readable: last)
            close(fd)
            guard let n = next else { return nil }
            fd = n
            at += "/" + name
        }
        return Directory(path: shown, fd: fd)
    }

    /// A path's components: what lies between its `/`s, empty ones dropped.
    static func components(of path: String) -> [String] {
        func split(_ b: UnsafeBufferPointer<UInt8>) -> [String] {
            var parts: [String] = []
            var start = 0
            for i in 0...b.count where i == b.count || b[i] == UInt8(ascii: "/") {
                if i > start { parts.append(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)) }
                start = i + 1
            }
            return parts
        }
        return path.utf8.withContiguousStorageIfAvailable(split) ?? Array(path.utf8).withUnsafeBufferPointer(split)
    }

    /// Whether an absolute path names at least one component and none is `.` or `..`.
    static func isPlain(_ path: String) -> Bool {
        // On the contiguous bytes, in place: through `utf8`'s iterator each byte cost 20
        // instructions, and this runs for every directory a request opens.
        if let plain = path.utf8.withContiguousStorageIfAvailable(isPlain(bytes:)) { return plain }
        return Array(path.utf8).withUnsafeBufferPointer { isPlain(bytes: $0) }
    }

    private static func isPlain(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var length = 0, allDots = true, any = false
        for b in bytes {
            if b == UInt8(ascii: "/") {
                if length > 0 {
                    if allDots, length <= 2 { return false }
                    any = true
                }
                length = 0
                allDots = true
            } else {
                length += 1
                if b != UInt8(ascii: ".") { allDots = false }
            }
        }
        if length > 0 {
            if allDots, length <= 2 { return false }
            any = true
        }
        return any
    }

    /// The directory holding `path`, and the last component of `path`.
    package static func parent(of path: String, create: Bool = false) throws -> (Directory, String)? {
        let bytes = path.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { throw FileSystem.failure("not an absolute path", path, errno: EINVAL) }
        let leaf = String(path[bytes.index(after: slash)...])
        guard !leaf.isEmpty, leaf != ".", leaf != ".." else { throw FileSystem.failure("not a file name", path, errno: EINVAL) }
        let dir = slash == bytes.startIndex ? "/" : String(path[..<slash])
        guard let d = try open(dir, create: create) else { return nil }
        return (d, leaf)
    }

    private static func openChild(_ fd: Int32, _ at: String, _ name: String, create: Bool, readable: Bool) throws -> Int32? {
        if name == "." || name == ".." { throw FileSystem.failure("refusing a path with '\(name)' in it", at + "/" + name, errno: EINVAL) }
        let flags = (readable ? O_RDONLY : passThrough) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        var made = false
        while true {
            let n = openat(fd, name, flags)
            if n >= 0 { return n }
            let e = errno
            if e == EINTR { continue }
            if e == ENOENT {
                guard create, !made else { return nil }
                if CrashPoints.fails("mkdir " + at + "/" + name) { throw FileSystem.failure("cannot create directory", at + "/" + name) }
                if mkdirat(fd, name, FileSystem.directoryPermissions) != 0 && errno != EEXIST {
                    throw FileSystem.failure("cannot create directory", at + "/" + name)
                }
                WriteCounter.changedTree()
                made = true
                continue
            }
            if e == ELOOP || e == ENOTDIR || e == EMLINK {
                if kind(fd, name) == .symlink { throw FileSystem.symlink(at + "/" + name) }
                throw FileSystem.failure("not a directory", at + "/" + name, errno: ENOTDIR)
            }
            throw FileSystem.failure("cannot open directory", at + "/" + name, errno: e)
        }
    }

    package static func kind(_ fd: Int32, _ name: String) -> Kind? {
        var st = stat()
        guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        case S_IFLNK: return .symlink
        default: return .other
        }
    }

    /// A subdirectory, made (0700) if `create` and missing; nil if missing.
    func subdirectory(_ name: String, create: Bool = false) throws -> Directory? {
        guard let n = try Directory.openChild(fd, path, name, create: create, readable: true) else { return nil }
        return Directory(path: path + "/" + name, fd: n)
    }

    // MARK: reading

    /// What `name` is, without following a link; nil when absent.
    package func kind(of name: String) -> Kind? { Directory.kind(fd, name) }

    package func status(of name: String) -> stat? {
        var st = stat()
        return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st : nil
    }

    /// Opens a regular file for reading; nil when absent; a link is an error, and so is
    /// anything that is not a regular file (a FIFO planted here would block the read forever).
    func openFile(_ name: String) throws -> Int32? {
        try openFileWithStatus(name)?.fd
    }

    /// `openFile`, with the status it checked (its size: what a whole read expects).
    func openFileWithStatus(_ name: String) throws -> (fd: Int32, status: stat)? {
        while true {
            let f = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if f >= 0 { return try regularFile(f, name) }
            if errno == EINTR { continue }
            if errno == ENOENT { return nil }
            if errno == ELOOP || errno == EMLINK { throw FileSystem.symlink(path + "/" + name) }
            throw FileSystem.failure("cannot open", path + "/" + name)
        }
    }

    /// `f` (opened non-blocking) if it is a regular file; otherwise it is
    /// closed and the error names the path: a FIFO, socket or device inside the data directory
    /// is never read or written (it could hang ck or swallow a write).
    private func regularFile(_ f: Int32, _ name: String) throws -> (fd: Int32, status: stat) {
        var st = stat()
        guard fstat(f, &st) == 0 else {
            let e = FileSystem.failure("cannot stat", path + "/" + name)
            close(f)
            throw e
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(f)
            throw FileSystem.notRegular(path + "/" + name, mode: st.st_mode)
        }
        // O_NONBLOCK stays: it changes nothing for a regular file (and saves two calls a read).
        return (f, st)
    }

    /// A whole file; nil when it does not exist.
    package func read(_ name: String) throws -> [UInt8]? {
        guard let (f, st) = try openFileWithStatus(name) else { return nil }
        defer { close(f) }
        return try FileSystem.readAll(f, status: st, path: self.path + "/" + name)
    }

    func readJSON(_ name: String) throws -> JSONValue? {
        guard let bytes = try read(name) else { return nil }
        do { return try JSONParser.parse(bytes) } catch {
            throw CloudKitError.internalError("corrupt file '\(path)/\(name)': \(error)").with(.repairDataDirectory)
        }
    }

    /// Entry names (without `.` and `..`), sorted by their bytes so listings are deterministic.
    package func entries() throws -> [String] {
        let f = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if f < 0 { throw FileSystem.failure("cannot list", path) }
        guard let d = fdopendir(f) else { close(f); throw FileSystem.failure("cannot list", path) }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return names
    }

    // MARK: writing

    /// Replaces `name` atomically: a temporary file in this directory, written and (if
    /// `durable`) fsynced, renamed over `name`, then this directory fsynced. A link at `name` is
    /// replaced, never followed. On failure the temporary file is removed and `name` is as it was.
    package func write(_ name: String, _ bytes: [UInt8], durable: Bool = true) throws {
        let tmp = try prepare(bytes, durable: durable)
        try publish(tmp, as: name)
        if durable { sync() }
    }

    func writeJSON(_ name: String, _ value: JSONValue, durable: Bool = true) throws {
        try write(name, Array(JSONWriter.pretty(value).utf8), durable: durable)
    }

    /// Writes bytes to a new temporary file here and returns its name; `publish` renames it
    /// into place, `discard` removes it. This is how a commit writes everything before the
    /// point of no return.
    package func prepare(_ bytes: [UInt8], durable: Bool = false) throws -> String {
        let tmp = FileSystem.temporaryName()
        if CrashPoints.fails("create " + path + "/" + tmp) { throw FileSystem.failure("cannot create", path + "/" + tmp) }
        let f = openat(fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileSystem.filePermissions)
        if f < 0 { throw FileSystem.failure("cannot create", path + "/" + tmp) }
        do {
            try FileSystem.writeAll(f, bytes, path: path + "/" + tmp)
            if durable { try FileSystem.fsync(f, path: path + "/" + tmp) }
            close(f)
        } catch {
            close(f)
            unlinkat(fd, tmp, 0)
            throw error
        }
        return tmp
    }

    package func publish(_ tmp: String, as name: String) throws {
        defer { WriteCounter.changedEntry(name, in: path) }
        if CrashPoints.fails("rename " + path + "/" + name) || renameat(fd, tmp, fd, name) != 0 {
            let e = FileSystem.failure("cannot rename into", path + "/" + name)
            unlinkat(fd, tmp, 0)
            throw e
        }
    }

    /// Publishes a prepared file only if `name` does not exist yet (atomic create): true if it
    /// was published, false if `name` existed (the temporary file is then removed).
    func publishIfAbsent(_ tmp: String, as name: String) throws -> Bool {
        defer { WriteCounter.changedEntry(name, in: path) }
        defer { unlinkat(fd, tmp, 0) }
        if CrashPoints.fails("link " + path + "/" + name) { throw FileSystem.failure("cannot create", path + "/" + name) }
        if linkat(fd, tmp, fd, name, 0) == 0 { return true }
        if errno == EEXIST { return false }
        throw FileSystem.failure("cannot create", path + "/" + name)
    }

    package func discard(_ tmp: String) { unlinkat(fd, tmp, 0) }

    /// Removes an empty subdirectory; anything else stays.
    func removeIfEmpty(_ name: String) {
        unlinkat(fd, name, AT_REMOVEDIR)
        WriteCounter.changedTree()
    }

    /// Removes a file or a link (never what a link points to); a missing one is not an error.
    package func remove(_ name: String) throws {
        defer { WriteCounter.changedEntry(name, in: path) }
        guard kind(of: name) != nil else { return }
        if CrashPoints.fails("unlink " + path + "/" + name) { throw FileSystem.failure("cannot remove", path + "/" + name) }
        if unlinkat(fd, name, 0) != 0 && errno != ENOENT {
            if errno == EISDIR || errno == EPERM, kind(of: name) == .directory { try removeTree(name); return }
            throw FileSystem.failure("cannot remove", path + "/" + name)
        }
    }

    /// Removes a file, or a directory and everything in it, without following any link.
    func removeTree(_ name: String) throws {
        defer { WriteCounter.changedTree() }
        switch kind(of: name) {
        case nil: return
        case .directory:
            if let d = try subdirectory(name) {
                for e in try d.entries() { try d.removeTree(e) }
            }
            if CrashPoints.fails("rmdir " + path + "/" + name) { throw FileSystem.failure("cannot remove directory", path + "/" + name) }
            if unlinkat(fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT { throw FileSystem.failure("cannot remove directory", path + "/" + name) }
        default:
            if CrashPoints.fails("unlink " + path + "/" + name) { throw FileSystem.failure("cannot remove", path + "/" + name) }
            if unlinkat(fd, name, 0) != 0 && errno != ENOENT { throw FileSystem.failure("cannot remove", path + "/" + name) }
        }
    }

    /// A second name for a file in this directory (a hard link: no data is copied).
    package func link(_ name: String, as other: String) throws {
        defer { WriteCounter.changedEntry(other, in: path) }
        if CrashPoints.fails("link " + path + "/" + other) || linkat(fd, name, fd, other, 0) != 0 {
            throw FileSystem.failure("cannot link", path + "/" + other)
        }
    }

    /// Renames within this directory, replacing `target` (a rename needs no space).
    func rename(_ name: String, to target: String) throws {
        defer { WriteCounter.changedTree() }
        if CrashPoints.fails("rename " + path + "/" + target) || renameat(fd, name, fd, target) != 0 {
            throw FileSystem.failure("cannot rename", path + "/" + name)
        }
    }

    /// Renames `name` here to `newName` in `target` (atomic on one file system).
    package func move(_ name: String, to target: Directory, as newName: String) throws {
        defer { WriteCounter.changedTree() }
        if CrashPoints.fails("rename " + path + "/" + name) || renameat(fd, name, target.fd, newName) != 0 {
            throw FileSystem.failure("cannot rename", path + "/" + name)
        }
    }

    /// Opens (creating, 0600) a file for appending or in-place writes; a link is an error.
    func openForWriting(_ name: String, create: Bool = true) throws -> Int32 {
        try openForWritingWithStatus(name, create: create).fd
    }

    /// `openForWriting`, with the status it checked (its size: where an append goes).
    func openForWritingWithStatus(_ name: String, create: Bool = true) throws -> (fd: Int32, status: stat) {
        while true {
            let f = openat(fd, name, O_RDWR | (create ? O_CREAT : 0) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, FileSystem.filePermissions)
            if f >= 0 { return try regularFile(f, name) }
            if errno == EINTR { continue }
            if errno == ELOOP || errno == EMLINK { throw FileSystem.symlink(path + "/" + name) }
            throw FileSystem.failure("cannot open", path + "/" + name)
        }
    }

    /// Appends bytes to a file (made 0600 if missing) and fsyncs it. If the write fails part
    /// way (a full disk), the file is cut back to its old length, so nothing changed.
    package func append(_ name: String, _ bytes: [UInt8], durable: Bool = true) throws {
        // The file may be new: its directory's listing changes too.
        defer { WriteCounter.changedEntry(name, in: path) }
        let f = try openForWriting(name)
        defer { close(f) }
        var st = stat()
        guard fstat(f, &st) == 0 else { throw FileSystem.failure("cannot stat", path + "/" + name) }
        try FileSystem.writeAt(f, bytes, offset: Int64(st.st_size), path: path + "/" + name, rollback: true)
        if durable {
            do { try FileSystem.fsync(f, path: path + "/" + name) } catch {
                _ = ftruncate(f, st.st_size)
                throw error
            }
        }
    }

    /// Cuts a file to `length` bytes and syncs it.
    func truncate(_ name: String, to length: Int64) throws {
        defer { WriteCounter.changedFile(named: name) }
        let f = try openForWriting(name, create: false)
        defer { close(f) }
        if CrashPoints.fails("truncate " + path + "/" + name) || ftruncate(f, off_t(length)) != 0 {
            throw FileSystem.failure("cannot truncate", path + "/" + name)
        }
        try FileSystem.fsync(f, path: path + "/" + name)
    }

    func setMode(_ name: String, _ mode: mode_t) throws {
        defer { WriteCounter.changedFile(named: name) }
        if CrashPoints.fails("chmod " + path + "/" + name) || fchmodat(fd, name, mode, 0) != 0 {
            throw FileSystem.failure("cannot change the mode of", path + "/" + name)
        }
    }

    /// Makes this directory's entries (renames, new files) durable.
    func sync() { _ = Glibc.fsync(fd) }

    /// Flushes every pending write of the file system holding this directory (Linux `syncfs`;
    /// a full `sync` elsewhere): one sync that makes a batch of non-durable writes durable.
    func syncFileSystem() {
        #if os(Linux)
        _ = linuxSyncfs(fd)
        #else
        Glibc.sync()
        #endif
    }
}

#if os(Linux)
/// glibc's `syncfs(2)`, which the Glibc module does not export without _GNU_SOURCE.
@_silgen_name("syncfs")
private func linuxSyncfs(_ fd: Int32) -> Int32
#endif

/// Opening a path below a directory in one call.
extension Directory {
    enum BeneathOpen {
        case opened(fd: Int32, status: stat)
        case absent
        /// Not done here: the caller opens each level itself (and reports what it finds).
        case unsupported
    }

    /// `relative` (`shard/name.json`) opened for reading in one call, refusing any link at any
    /// level (Linux `openat2` with RESOLVE_NO_SYMLINKS and RESOLVE_BENEATH), if it is a regular
    /// file; `.absent` when some level is missing. Anything else — a link, a directory or a
    /// FIFO where the file should be, a kernel without `openat2` — is `.unsupported`, so the
    /// level-by-level path gives its usual answer and error.
    func openBeneath(_ relative: String) -> BeneathOpen {
        #if os(Linux)
        guard Directory.hasOpenat2 else { return .unsupported }
        var how = OpenHow(flags: UInt64(O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), mode: 0, resolve: 0x04 | 0x08)
        while true {
            let f = relative.withCString { p in withUnsafePointer(to: &how) { linuxSyscall(437, Int(fd), p, $0, MemoryLayout<OpenHow>.size) } }
            if f >= 0 {
                var st = stat()
                if fstat(Int32(f), &st) == 0, st.st_mode & S_IFMT == S_IFREG { return .opened(fd: Int32(f), status: st) }
                close(Int32(f))
                return .unsupported
            }
            switch errno {
            case EINTR, EAGAIN: continue
            case ENOENT: return .absent
            case ENOSYS, EPERM:
                Directory.hasOpenat2 = false
                return .unsupported
            default: return .unsupported
            }
        }
        #else
        return .unsupported
        #endif
    }

    enum WholeOpen {
        case opened(Int32)
        case absent
        /// Not done here: `open` walks the path a level at a time.
        case unsupported
    }

    /// An absolute path without `.` or `..` opened as a directory (readable) in one call,
    /// refusing a link at any level (Linux `openat2` with RESOLVE_NO_SYMLINKS): what `open`'s
    /// walk does with one `openat` per level. `.absent` when some level is missing; anything
    /// else — a link, a file where a directory should be, a permission refused, a kernel
    /// without `openat2` — is `.unsupported`, and the walk gives its usual answer and error.
    static func openWhole(_ path: String) -> WholeOpen {
        #if os(Linux)
        guard hasOpenat2 else { return .unsupported }
        var how = OpenHow(flags: UInt64(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), mode: 0, resolve: 0x04)
        while true {
            let f = path.withCString { p in withUnsafePointer(to: &how) { linuxSyscall(437, Int(AT_FDCWD), p, $0, MemoryLayout<OpenHow>.size) } }
            if f >= 0 { return .opened(Int32(f)) }
            switch errno {
            case EINTR, EAGAIN: continue
            case ENOENT: return .absent
            case ENOSYS, EPERM:
                hasOpenat2 = false
                return .unsupported
            default: return .unsupported
            }
        }
        #else
        return .unsupported
        #endif
    }

    #if os(Linux)
    /// Cleared the first time the kernel (or a seccomp filter) refuses `openat2`.
    nonisolated(unsafe) private static var hasOpenat2 = true
    #endif
}

#if os(Linux)
/// `struct open_how` of `openat2(2)`.
private struct OpenHow {
    var flags: UInt64
    var mode: UInt64
    var resolve: UInt64
}

/// glibc's `syscall(2)` (variadic in C; every argument here is an integer or a pointer, passed
/// in the same registers either way), for `openat2`, which glibc does not wrap.
@_silgen_name("syscall")
private func linuxSyscall(_ number: Int, _ dirfd: Int, _ path: UnsafePointer<CChar>, _ how: UnsafePointer<OpenHow>, _ size: Int) -> Int
#endif
