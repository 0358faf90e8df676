import CKModel
import Foundation

/// One environment of a container as writers share it: every write holds the environment's
/// lock shared; `ck schema reset`, which replaces the development environment's data whole,
/// holds it exclusively. A reset writes `reset.json` before it starts and removes it when done,
/// so a reset a crash interrupted is finished — by the next command that uses the environment,
/// reader or writer, or by `ck fsck` — before anyone sees half of it.
struct EnvironmentGuard {
    package let paths: DataPaths
    package let container: String
    package let environment: Environment

    package var directory: String { paths.environment(container, environment) }
    var lockFile: String { directory + "/lock" }
    var resetMarker: String { directory + "/reset.json" }

    /// Only development is ever reset; a `reset.json` elsewhere is not ck's (fsck reports it).
    package var resets: Bool { environment == .development }

    /// The shared lock a write holds, after finishing an interrupted reset.
    func lockForWriting() throws -> FileLock {
        while true {
            let lock = try FileLock(path: lockFile, .shared)
            if try !resets || !FileSystem.exists(resetMarker) { return lock }
            lock.unlock()
            try finishInterruptedReset()
        }
    }

    /// For readers: one check that no reset is half done.
    func checkForInterruptedReset() throws {
        // Every request asks; the marker is almost never there (one lstat, or none, says so).
        if StampedFiles.shared.isAbsent(resetMarker) { return }
        if try resets && FileSystem.exists(resetMarker) { try finishInterruptedReset() }
    }

    func finishInterruptedReset() throws {
        let lock = try FileLock(path: lockFile, .exclusive)
        defer { lock.unlock() }
        if try resets && FileSystem.exists(resetMarker) { try SchemaAdmin(paths: paths, container: container).completeReset() }
    }
}
