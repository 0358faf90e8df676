/// When a database brings its zones' indexes forward: after each commit, unless a bulk load
/// defers it to its end (`ck import`: one build instead of one per batch).
extension Database {
    /// After a commit through `head`, with the zone's lock held. The index is derived: a
    /// failure here never fails the commit (readers fall back on the records, and the next
    /// commit, or `ck fsck`, makes the runs again).
    func maintainIndexes(_ z: ZoneStore, through head: Int64) {
        guard !defersIndexMaintenance else { return }
        let index = ZoneIndex(zone: z)
        guard index.isDue(head: head) else { return }
        // The schema as this commit left it (fields defined just in time included).
        forgetCachedSchema()
        guard let s = try? schema() else { return }
        try? index.maintain(schema: s, head: head)
    }

    /// Brings a zone's indexes up to its head now (what `ck import` does once at its end).
    public func maintainIndexes(zone name: String) throws {
        let env = try environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try lockZone(name)
        defer { lock.unlock() }
        guard case .present(let z) = try zonePresence(name) else { return }
        try finishInterruptedCommit(z)
        forgetCachedSchema()
        try ZoneIndex(zone: z).maintain(schema: try schema(), head: try z.history.head())
    }
}
