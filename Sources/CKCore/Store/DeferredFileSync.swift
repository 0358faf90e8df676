/// A bulk load's record files synced once per `fileSyncInterval` history entries instead of
/// after every commit (`syncfs` after each batch of 400 was a quarter of an import).
///
/// Only the derived files wait: each commit's history entries are made durable before it
/// returns, as always. Until the sync, the zone's applied cursor stays behind, which is exactly
/// the state a crash after a commit's point of no return leaves: readers take the entries
/// after the cursor from the history (ZoneSnapshot), and the zone's next writer — another
/// process, or this one after a crash — publishes them again from it. This process alone
/// skips that replay, and only while the zone's head is still its own last commit: every
/// entry after the cursor is then one whose files it published itself.
extension Database {
    /// Whether a commit through `last` leaves its files unsynced (and the cursor where it is).
    func defersFileSync(_ z: ZoneStore, through last: Int64) -> Bool {
        guard fileSyncInterval > 0 else { return false }
        return last - ((try? z.appliedSeq()) ?? 0) < fileSyncInterval
    }

    /// Syncs what the bulk load left unsynced and moves each zone's applied cursor; the end of
    /// `ck import` (and its failure path) calls it.
    public func completeDeferredFileSyncs() throws {
        for (name, u) in unsyncedFiles.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            unsyncedFiles[name] = nil
            let env = try environmentGuard.lockForWriting()
            defer { env.unlock() }
            let lock = try lockZone(name)
            defer { lock.unlock() }
            // Another writer since: it has finished the entries (or will) itself.
            guard case .present(let z) = try zonePresence(name), z.incarnation == u.incarnation,
                  try z.history.head() == u.head, try z.appliedSeq() < u.head else { continue }
            z.syncFiles()
            try z.setApplied(u.head)
        }
    }
}
