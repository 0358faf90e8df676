import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Test hooks on every operation that changes the disk (write, fsync, rename, unlink, mkdir,
/// truncate, link). They are how ck proves its crash and full-disk promises exhaustively: the
/// CLI arms them from `CK_DEBUG_CRASH_AT_OP` and `CK_DEBUG_ENOSPC_AT_OP` (see
/// Docs/reliability.md); nothing else sets them.
package enum CrashPoints {
    /// Mutating operations performed so far by this process while something was armed (from
    /// its start: the CLI arms before any operation).
    nonisolated(unsafe) public private(set) static var operations = 0
    /// The process exits at once (like `kill -9`) instead of performing this operation (1-based).
    nonisolated(unsafe) package static var crashAtOperation: Int?
    /// This operation and every later one that needs space (mkdir, create, write, link, fsync)
    /// fail with ENOSPC, as on a full disk — a write first writes half its bytes. Operations that
    /// free or move space (unlink, rmdir, rename, truncate, chmod) still work, as they do there.
    nonisolated(unsafe) package static var noSpaceFromOperation: Int?
    /// Called with each operation's description, for tests that list the crash points.
    nonisolated(unsafe) package static var trace: ((Int, String) -> Void)?

    private static let lock = NSLock()

    /// Whether a crash, a full disk or a trace is armed: then every operation runs on one
    /// thread, in order, so that "operation N" names the same operation on every run.
    static var isArmed: Bool { crashAtOperation != nil || noSpaceFromOperation != nil || trace != nil }

    package static func reset() {
        operations = 0
        crashAtOperation = nil
        noSpaceFromOperation = nil
        trace = nil
    }

    static func needsSpace(_ what: String) -> Bool {
        for p in ["mkdir ", "create ", "write ", "link ", "fsync "] where what.hasPrefix(p) { return true }
        return false
    }

    /// Counts one mutating operation; crashes or reports ENOSPC when armed to.
    /// Returns true when the operation must fail with ENOSPC (errno is set).
    /// Nothing armed (the CLI arms them as the process starts, or never): nothing to count, and
    /// the description is never made — this runs for every file a commit writes.
    package static func fails(_ description: @autoclosure () -> String) -> Bool {
        guard isArmed else { return false }
        let what = description()
        // Commits prepare files on several threads when nothing is armed (`isArmed`).
        lock.lock()
        defer { lock.unlock() }
        operations += 1
        trace?(operations, what)
        if let c = crashAtOperation, operations >= c { _exit(137) }
        if let n = noSpaceFromOperation, operations >= n, needsSpace(what) { errno = ENOSPC; return true }
        return false
    }
}
