import CKModel

/// `ck fsck` on a zone's tombstones (Tombstones.swift): each name the history deletes has one
/// naming its latest deletion, rewritten when missing, damaged or wrong; a damaged file nothing
/// accounts for is removed. A tombstone of a name whose deletions `ck gc` dropped is left: no
/// feed asks for it.
extension Fsck {
    func checkTombstones(_ z: ZoneStore, latestDeletions: [NameKey: Int64]) throws {
        // Names whose files share a path (a case-insensitive file system) share a tombstone:
        // the one deleted last holds it, as the commits left it.
        var expected: [String: (name: NameKey, seq: Int64)] = [:]
        for (k, seq) in latestDeletions {
            let path = z.tombstonePath(k.string)
            if expected[path].map({ seq > $0.seq }) ?? true { expected[path] = (k, seq) }
        }
        if let deleted = try Directory.open(z.deletedDirectory) {
            for shard in try deleted.entries() where !shard.hasPrefix(".") && deleted.kind(of: shard) == .directory {
                guard let sdir = try deleted.subdirectory(shard) else { continue }
                for file in try sdir.entries() where file.hasSuffix(".json") && !file.hasPrefix(".") && sdir.kind(of: file) == .file {
                    let path = z.deletedDirectory + "/" + shard + "/" + file
                    guard expected[path] == nil, ((try? sdir.readJSON(file)) ?? nil).flatMap(ZoneStore.parseTombstone) == nil else { continue }
                    if repair { try sdir.remove(file) }
                    note(path, "tombstone file is damaged and the history deletes no record of its name", repaired: repair)
                }
            }
        }
        var fix: [NameKey: Int64] = [:]
        for (path, want) in expected.sorted(by: { $0.key < $1.key }) {
            let found = ((try? FileSystem.readJSON(path)) ?? nil).flatMap(ZoneStore.parseTombstone)
            if let f = found, f.recordName.sameBytes(want.name.string), f.seq == want.seq { continue }
            let who = "record '\(Names.describe(want.name.string))'"
            note(path, found.map { "tombstone of \(who) names entry \($0.seq); its latest deletion is entry \(want.seq)" }
                 ?? "tombstone of \(who), deleted by entry \(want.seq), is missing or damaged", repaired: repair)
            fix[want.name] = want.seq
        }
        if repair && !fix.isEmpty {
            let p = try z.prepare(records: [:], refs: [:], tombstones: fix)
            try z.publish(p)
            z.syncFiles()
        }
    }
}
