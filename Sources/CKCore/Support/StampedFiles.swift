import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Small JSON files read again and again by a long-lived process (`ck serve` reads the device's
/// account, the API tokens, a web session and the armed faults for every request), kept parsed
/// as long as the file is the same one: same inode, size, modification and change times
/// (`lstat`, so a link put in its place is a change, and is then refused by the read). Every
/// file read this way is written whole under a new name and renamed into place, so a changed
/// file is a new inode; another process's write is seen at the next read.
final class StampedFiles: @unchecked Sendable {
    static let shared = StampedFiles()

    struct Stamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: Int64, modifiedNanos: Int64, changed: Int64, changedNanos: Int64
    }

    private let lock = NSLock()
    private var files: [String: (Stamp, JSONValue)] = [:]
    private var listings: [String: (Stamp, [String])] = [:]
    private var parsed: [String: (Stamp, Any)] = [:]
    /// Small record files read by lookups: at most `mostRecords` of at most `smallFile` bytes
    /// each (≤ 8 MiB in all), so the cache never costs a server more than that.
    private var records: [String: (Stamp, Record?)] = [:]
    static let smallFile: Int64 = 8192
    private let mostRecords = 1024
    /// Beyond this many entries the cache starts afresh (a store has a handful of such files).
    private let most = 4096

    static func stamp(_ path: String) -> Stamp? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Stamp(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                     modified: Int64(st.st_mtim.tv_sec), modifiedNanos: Int64(st.st_mtim.tv_nsec),
                     changed: Int64(st.st_ctim.tv_sec), changedNanos: Int64(st.st_ctim.tv_nsec))
    }

    /// The file's JSON, as `FileSystem.readJSON` reads it; nil when it does not exist.
    func readJSON(_ path: String) throws -> JSONValue? {
        // Stamped before it is read: a file replaced in between is read again next time.
        guard let stamp = Self.stamp(path) else {
            forget(path)
            // Absent (the commonest: no faults armed): nothing to read. Anything else is left
            // to the careful read, which says what is wrong.
            if errno == ENOENT { return nil }
            return try FileSystem.readJSON(path)
        }
        lock.lock()
        if let (s, v) = files[path], s == stamp { lock.unlock(); return v }
        lock.unlock()
        let v = try FileSystem.readJSON(path)
        lock.lock()
        if files.count >= most { files.removeAll() }
        if let v { files[path] = (stamp, v) } else { files[path] = nil }
        lock.unlock()
        return v
    }

    /// The names in a directory, as `FileSystem.list` gives them, kept while the directory is
    /// the same (an entry added, removed or renamed in changes its times).
    func list(_ path: String) throws -> [String] {
        guard let stamp = Self.stamp(path) else { return try FileSystem.list(path) }
        lock.lock()
        if let (s, names) = listings[path], s == stamp { lock.unlock(); return names }
        lock.unlock()
        let names = try FileSystem.list(path)
        lock.lock()
        if listings.count >= most { listings.removeAll() }
        listings[path] = (stamp, names)
        lock.unlock()
        return names
    }

    /// What `read` makes of the file (a parsed schema), kept while the file is the same one;
    /// nil, uncached, when the file does not exist.
    func value<T>(_ path: String, _ read: () throws -> T) throws -> T? {
        guard let stamp = Self.stamp(path) else { return nil }
        lock.lock()
        if let (s, v) = parsed[path], s == stamp, let t = v as? T { lock.unlock(); return t }
        lock.unlock()
        let v = try read()
        lock.lock()
        if parsed.count >= most { parsed.removeAll() }
        parsed[path] = (stamp, v)
        lock.unlock()
        return v
    }

    /// A record file as `read` decodes it, kept while `lstat` shows the same file, when the file
    /// is small. nil (outer) when the file does not exist or is not kept: read it then.
    func record(_ path: String, _ read: () throws -> Record?) throws -> Record?? {
        guard let stamp = Self.stamp(path), stamp.size <= Self.smallFile else { return nil }
        lock.lock()
        if let (s, r) = records[path], s == stamp { lock.unlock(); return .some(r) }
        lock.unlock()
        let r = try read()
        lock.lock()
        if records.count >= mostRecords { records.removeAll() }
        records[path] = (stamp, r)
        lock.unlock()
        return .some(r)
    }

    private func forget(_ path: String) {
        lock.lock()
        files[path] = nil
        lock.unlock()
    }
}
