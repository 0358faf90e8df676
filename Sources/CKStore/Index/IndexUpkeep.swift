import CKModel

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

    /// How many records of each type zone `z` holds at its history's head, whatever the
    /// caller may read (ZoneIndex.recordCounts); nil when the zone keeps no counts yet.
    package func recordCounts(in z: ZoneStore) throws -> [String: Int64]? { try ZoneIndex(zone: z).recordCounts() }

    /// The end of a bulk load (`ck import`) into a zone it wrote to: the record files synced,
    /// and the indexes brought up to the zone's head once — from the load's own index entries
    /// when they still describe the zone (BulkLoad), else as any commit would.
    package func finishBulkLoad(_ bulk: BulkLoad) throws {
        defer { bulk.discard() }
        let env = try environmentGuard.lockForWriting()
        defer { env.unlock() }
        let lock = try lockZone(bulk.zoneName)
        defer { lock.unlock() }
        guard case .present(let z) = try zonePresence(bulk.zoneName) else { return }
        try finishInterruptedCommit(z)
        try makeRecordFilesDurable(z)
        forgetCachedSchema()
        let s = try schema()
        let head = try z.history.head()
        let index = ZoneIndex(zone: z)
        if try !bulk.writeIndexes(index, schema: s, head: head) { try index.maintain(schema: s, head: head) }
    }
}
