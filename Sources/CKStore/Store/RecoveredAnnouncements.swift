import CKJSON
import CKModel
import Foundation

/// A database's entries that a crash left unindexed, and the zone commits they announce.
///
/// A write syncs its database entry first, then its zone's entries, and indexes the zone's
/// before the database's (`Database.commitDurably`), so that no reader sees the announcement
/// before the commit. A crash between the zone's sync and its index words leaves both synced
/// and unindexed, and they are indexed by whoever finds them — the database's entry by any
/// holder of the database's lock, the zone's by a holder of the zone's. Were the entry indexed
/// first, a client could read it, fetch the zone without the commit, and keep a token past the
/// announcement: the commit, indexed later, would never be announced to it. So before the
/// database's unindexed entries are indexed, each zone they name has its own crashed tail
/// recovered first (indexed, or cut when it is not a whole commit: then the entry announces a
/// commit that never happened, which a client fetching the zone finds nothing new for).
enum RecoveredAnnouncements {
    /// How long a writer waits for another process holding a zone's lock to recover it.
    static let wait: Double = 2

    /// The caller holds the database's lock. The zone's is only tried: zones are locked before
    /// their database. While another process holds it, this waits (`waiting`) for that process
    /// to let it go or recover the zone (a writer of it recovers it first thing), then gives up
    /// (TRY_AGAIN_LATER), leaving the entries unindexed; a reader gives up at once and reads
    /// without them. A holder that recovers nothing (`ck fsck --dry-run`) keeps the database's
    /// writes refused while it holds the zone (storage.md).
    static func recoverZones(announcedBy entries: [JSONValue], in database: String, waiting: Bool) throws {
        var done: [String] = []
        for e in entries where e["op"]?.stringValue == "change" {
            guard let name = e["zoneName"]?.stringValue, !done.contains(name) else { continue }
            done.append(name)
            let zone = ChangeHistory.ofZone(DataPaths.zone(database: database, zoneName: name))
            guard let lockFile = zone.lockFile else { continue }
            let deadline = DispatchTime.now() + (waiting ? wait : 0)
            // A log longer than its index is a crash's leftover (the database's lock is held, and
            // a write appends a zone's entries only under it), or an append of `ck fsck`'s, which
            // holds the zone's lock and indexes it itself.
            while let dir = try Directory.open(zone.directory), try zone.hasUnindexedTail(dir) {
                if let lock = try FileLock.attempt(lockFile) {
                    defer { lock.unlock() }
                    try zone.recoverHead()
                    break
                }
                guard DispatchTime.now() < deadline else {
                    var error = CloudKitError(.tryAgainLater, "zone '\(Names.describe(name))' is being recovered from a crash by another process; try again", retryAfter: 1)
                    error.nativeCode = 23
                    throw error
                }
                usleep(2_000)
            }
        }
    }
}
