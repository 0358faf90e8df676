import CKJSON
import CKModel

/// A small JSON file that is changed only under its lock (the API tokens, the server keys, the
/// armed faults, the roles, an inbox's state): `update` takes the lock, reads the current
/// value, lets the caller change it, and writes it whole — a temporary file fsynced and renamed
/// into place, so a reader sees the old document or the new one, never a mix. Reads go
/// through StampedFiles, which keeps a parsed file while its inode and times are the same:
/// every write is a new inode, so the stamp of a changed file always changes and no reader,
/// in this process or another, keeps a stale value.
///
/// A change that throws writes nothing; one that leaves the document as it was writes nothing
/// either. `Value` is what the owner makes of the file (`decode` is given nil when it is
/// absent); `encode` returning nil removes the file.
struct LockedDocument<Value> {
    package let path: String
    let lockPath: String
    private let decode: (JSONValue?) throws -> Value
    private let encode: (Value) -> JSONValue?
    private let unreadable: (CloudKitError) -> Error

    /// `unreadable`: the error of a file that is not JSON (by default, the read's own).
    package init(_ path: String, lock lockPath: String, decode: @escaping (JSONValue?) throws -> Value, encode: @escaping (Value) -> JSONValue?,
                 unreadable: @escaping (CloudKitError) -> Error = { $0 }) {
        self.path = path
        self.lockPath = lockPath
        self.decode = decode
        self.encode = encode
        self.unreadable = unreadable
    }

    private func stored() throws -> JSONValue? {
        do { return try StampedFiles.shared.readJSON(path) } catch let e as CloudKitError where e.code == .internalError { throw unreadable(e) }
    }

    /// The document as it is now (no lock: it is only ever replaced whole).
    package func read() throws -> Value { try decode(try stored()) }

    /// Runs `body` holding the document's lock, for what else the owner does under it.
    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: lockPath)
        defer { lock.unlock() }
        return try body()
    }

    /// Reads the document under its lock, lets `change` change it, and writes it back.
    @discardableResult
    package func update<T>(_ change: (inout Value) throws -> T) throws -> T {
        try withLock { try updateHoldingLock(change) }
    }

    /// `update`, for a caller that holds the lock already.
    @discardableResult
    func updateHoldingLock<T>(_ change: (inout Value) throws -> T) throws -> T {
        let stored = try stored()
        var value = try decode(stored)
        let result = try change(&value)
        let new = encode(value)
        guard new != stored else { return result }
        if let new { try FileSystem.writeJSON(path, new) } else { try FileSystem.remove(path) }
        return result
    }
}
