import CKCrypto
import CKJSON
import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Asset bytes uploaded over `ck serve` that no record has taken yet, beside the asset store
/// (Docs/storage.md):
///
/// - `assets/uploads/<64 hex>`: the bytes of an upload, named by their SHA-256; the file's
///   modification time is when they were uploaded (by the API's clock). A `records/modify` that
///   saves them moves them into the asset store (`adopt`); those no record took within an
///   upload URL's lifetime (15 minutes) are removed (`sweep`: the server, every minute, and
///   `ck fsck`).
/// - `assets/uploads/.tmp-…`: an upload arriving (one whose process is gone is swept).
/// - `assets/uploads/used/<64 hex>.json`: an upload URL that was used, named by the SHA-256 of
///   its token: `{"expires"}`, the URL's own expiry. Made with O_EXCL semantics before the body
///   is read, so one URL takes one upload; removed with the URL's lifetime, when the URL is
///   refused as expired anyway.
package struct UploadArea {
    package let paths: DataPaths
    package let clock: Clock

    /// How long uploaded bytes wait for a record, and an upload URL lasts (Web Services'
    /// asset upload URLs: 15 minutes).
    package static let lifetime: Int64 = 15 * 60 * 1000

    package var directory: String { paths.assetsDirectory + "/uploads" }
    var usedDirectory: String { directory + "/used" }
    var lockFile: String { directory + "/lock" }

    private func markName(_ uploadToken: String) -> String { SHA256.hex(uploadToken.utf8) + ".json" }

    /// Marks an upload URL used, durably; false when it was already.
    package func claim(_ uploadToken: String, expires: Int64) throws -> Bool {
        try FileSystem.createExclusively(usedDirectory + "/" + markName(uploadToken), Array(JSONWriter.compact(["expires": .int(expires)]).utf8))
    }

    /// Takes back a claim whose upload did not arrive whole: the URL may be tried again.
    package func release(_ uploadToken: String) {
        try? FileSystem.remove(usedDirectory + "/" + markName(uploadToken))
    }

    /// A new temporary file to stream an upload into: the directory, its name, an open
    /// descriptor.
    package func begin() throws -> (Directory, String, Int32) {
        guard let dir = try Directory.open(directory, create: true) else { throw FileSystem.failure("cannot open", directory) }
        let tmp = FileSystem.temporaryName()
        let fd = openat(dir.fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileSystem.filePermissions)
        guard fd >= 0 else { throw FileSystem.failure("cannot create", directory + "/" + tmp) }
        return (dir, tmp, fd)
    }

    /// Puts a whole upload in place under its SHA-256 (replacing the same bytes uploaded
    /// before, so they wait a full lifetime again), dated now; synced before it returns.
    package func publish(_ dir: Directory, _ tmp: String, fd: Int32, hex: String) throws {
        let ms = clock.now()
        let when = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)
        var times = [when, when]
        guard futimens(fd, &times) == 0 else { throw FileSystem.failure("cannot date", directory + "/" + tmp) }
        try FileSystem.fsync(fd, path: directory + "/" + tmp)
        // Under the lock a sweep takes: it never removes bytes published since it looked.
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        try dir.publish(tmp, as: hex)
        dir.sync()
    }

    /// Moves uploaded bytes with this checksum into the asset store, for a record that saves
    /// them; their size, or nil when none wait.
    func adopt(checksum: String, into store: AssetStore) throws -> Int64? {
        guard let digest = Data(base64Encoded: checksum), digest.count == 32,
              let dir = try Directory.open(directory), dir.kind(of: Hex.string(Array(digest))) == .file else { return nil }
        let hex = Hex.string(Array(digest))
        guard let (shard, name) = try Directory.parent(of: store.path(checksum: checksum), create: true) else { return nil }
        // A sweep may have taken them since: then there is nothing to adopt.
        defer { WriteCounter.changedTree() }
        if renameat(dir.fd, hex, shard.fd, name) != 0 {
            if errno == ENOENT { return nil }
            throw FileSystem.failure("cannot move into the asset store", directory + "/" + hex)
        }
        shard.sync()
        dir.sync()
        return try store.size(checksum: checksum)
    }

    /// What a sweep finds: the path (below the data directory) and why it goes.
    package struct Expired {
        package var path: String
        package var why: String
    }

    /// Uploads no record took within their lifetime, and marks of upload URLs past their
    /// expiry; removed unless `dryRun`.
    package func sweep(dryRun: Bool = false) throws -> [Expired] {
        guard let dir = try Directory.open(directory) else { return [] }
        let now = clock.now()
        var found: [Expired] = []
        let lock = dryRun ? try FileLock.acquireExisting(lockFile) : try FileLock(path: lockFile)
        defer { lock?.unlock() }
        for name in try dir.entries() where name.utf8.count == 64 && dir.kind(of: name) == .file {
            guard let st = dir.status(of: name) else { continue }
            let uploaded = Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec) / 1_000_000
            guard uploaded + Self.lifetime < now else { continue }
            if !dryRun { try dir.remove(name) }
            found.append(Expired(path: "assets/uploads/" + name, why: "uploaded bytes no record took within \(Self.lifetime / 60_000) minutes of their upload"))
        }
        // An upload whose process died while it arrived (a server killed mid-upload).
        for name in try dir.entries() {
            guard let pid = FileSystem.temporaryOwner(name), kill(pid, 0) != 0, errno == ESRCH else { continue }
            if !dryRun { dir.discard(name) }
            found.append(Expired(path: "assets/uploads/" + name, why: "an upload that never arrived whole (its process is gone)"))
        }
        guard let used = try dir.subdirectory("used") else { return found }
        for name in try used.entries() where name.hasSuffix(".json") && used.kind(of: name) == .file {
            let expires = ((try? used.readJSON(name)) ?? nil)?["expires"]?.int64Value ?? 0
            guard expires < now else { continue }
            if !dryRun { try used.remove(name) }
            found.append(Expired(path: "assets/uploads/used/" + name, why: "the mark of an upload URL past its expiry"))
        }
        return found
    }

    package init(paths: DataPaths, clock: Clock) {
        self.paths = paths
        self.clock = clock
    }
}

extension AssetStore {
    /// The size of the bytes with this checksum in the store — moved in from the upload area
    /// when they are waiting there (a record saving an upload's receipt takes its bytes); nil
    /// when neither has them.
    func sizeTakingUpload(checksum: String) throws -> Int64? {
        if let n = try size(checksum: checksum) { return n }
        return try UploadArea(paths: paths, clock: .system).adopt(checksum: checksum, into: self)
    }
}
