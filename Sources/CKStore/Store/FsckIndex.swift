import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ck fsck` and a zone's query indexes: derived files, so a repair makes them all again from
/// the record files (which it has just checked against the history); a check reports runs it
/// cannot read. A damaged run never gave a wrong answer — queries check every record — but it
/// made them slower. The record counts the catalog keeps are checked against `live`, how many
/// records of each type the history leaves: a wrong count would be shown as it is.
extension Fsck {
    func checkIndexes(_ db: Database, _ z: ZoneStore, live: [String: Int64]) throws {
        let index = ZoneIndex(zone: z)
        if let kept = try? index.recordCounts(), kept != live {
            func shown(_ c: [String: Int64]) -> String { c.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
            note(index.directory + "/" + ZoneIndex.catalogName,
                 "the record counts kept (\(shown(kept))) are not the zone's (\(shown(live))); they are made again with the indexes", repaired: repair)
        }
        var damaged: [String] = []
        if let root = try Directory.open(index.directory) {
            for t in try root.entries() where !t.hasPrefix(".") && root.kind(of: t) == .directory {
                guard let tdir = try root.subdirectory(t) else { continue }
                var runs: [(Directory, String, String)] = try tdir.entries().filter(ZoneIndex.isRun).map { (tdir, $0, t + "/" + $0) }
                if let fdir = try tdir.subdirectory("fields") {
                    runs += try fdir.entries().filter(ZoneIndex.isRun).map { (fdir, $0, t + "/fields/" + $0) }
                }
                for (dir, name, shown) in runs where IndexRun.open(dir, name) == nil { damaged.append(index.directory + "/" + shown) }
            }
        }
        for d in damaged { note(d, "query index run is damaged or cut short (queries read the records instead)", repaired: repair) }
        guard repair else { return }
        db.forgetCachedSchema()
        do {
            try index.buildFromRecordFiles(schema: try db.schema(), head: try z.history.head())
        } catch let e as CloudKitError {
            // Derived files: without them queries read the records, and the zone's next commit
            // makes them again. A full disk must not keep fsck from finishing its repair.
            try? FileSystem.removeTree(index.directory)
            note(index.directory, "query indexes could not be made again (\(e.reason)): removed; queries read the records until the zone's next write", repaired: true)
        }
    }
}
