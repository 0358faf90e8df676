import CKModel
import Foundation

/// Syncs of a zone's record files that a bulk load's commit started on another thread
/// (ZoneStore.syncFilesIfDue): the load goes on committing while the disk catches up, and a
/// later commit of the same process records in `applied.json` how far a finished one reached.
/// A sync covers every file published before it started; one runs per zone at a time.
final class BackgroundSyncs: @unchecked Sendable {
    package static let shared = BackgroundSyncs()
    private let lock = NSLock()
    /// Zone (directory and incarnation) → the entry its running sync covers.
    private var running: [String: Int64] = [:]
    /// Zone → the last entry a finished sync covered.
    private var done: [String: Int64] = [:]

    private func key(_ z: ZoneStore) -> String { z.directory + "\u{0}" + z.incarnation }

    /// Starts a sync of the file system holding `z` covering its files through `seq`, unless one
    /// is running for it already.
    package func start(_ z: ZoneStore, through seq: Int64) {
        let k = key(z)
        lock.lock()
        defer { lock.unlock() }
        guard running[k] == nil else { return }
        running[k] = seq
        Thread.detachNewThread { [self] in
            z.syncFiles()
            lock.lock()
            running[k] = nil
            done[k] = max(done[k] ?? 0, seq)
            lock.unlock()
        }
    }

    /// The last entry of `z` a finished sync covered, if any.
    package func finished(_ z: ZoneStore) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        return done[key(z)]
    }
}
