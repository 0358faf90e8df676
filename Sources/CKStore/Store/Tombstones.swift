import CKJSON
import CKModel

/// A zone's tombstones, `deleted/<shard>/<name>.json`: for each record name ever deleted, the
/// history entry of its latest deletion. A change feed needs to know whether a deletion is the
/// last change of its name, and the history cannot say so cheaply: a name can be deleted, made
/// again (an entry whose `prev` is nil) and deleted again. A record file answers for saves (its
/// change tag is its entry); a tombstone answers for deletions: a deletion is its name's last
/// change when the name has no record file and its tombstone names that deletion.
///
/// Tombstones are derived from the history like the record files: prepared and published by the
/// commit that deletes (and by the replay of an interrupted one), rebuilt by `ck fsck`. They are
/// never removed: a name made again keeps its tombstone, which its record file outweighs, and a
/// later deletion overwrites it. A commit that deletes nothing (an import) writes none.
extension ZoneStore {
    static let deletedDirectoryName = "deleted"

    var deletedDirectory: String { directory + "/" + ZoneStore.deletedDirectoryName }

    func tombstonePath(_ name: String) -> String {
        deletedDirectory + "/" + PathEncoding.shard(name) + "/" + PathEncoding.component(name) + ".json"
    }

    static func tombstoneJSON(recordName: String, seq: Int64) -> JSONValue {
        ["schemaVersion": .int(FileFormat.schemaVersion), "recordName": .string(recordName), "seq": .int(seq)]
    }

    /// What a tombstone file holds: its name and the entry of the name's latest deletion.
    static func parseTombstone(_ j: JSONValue) -> (recordName: String, seq: Int64)? {
        guard let n = j["recordName"]?.stringValue, let s = j["seq"]?.int64Value else { return nil }
        return (n, s)
    }

    /// The entry of the latest deletion of `name` its tombstone holds; nil when there is none
    /// to trust — never deleted, deleted only by a ck that kept no tombstones, a damaged file,
    /// or a file holding another name (names that differ only in case on a case-insensitive
    /// file system). The caller then reads the history instead.
    func latestDeletion(of name: String) -> Int64? {
        guard let j = (try? FileSystem.readJSON(tombstonePath(name))) ?? nil, let t = ZoneStore.parseTombstone(j),
              t.recordName.sameBytes(name) else { return nil }
        return t.seq
    }
}

extension Transaction {
    /// The names this transaction deletes, each with the entry of its last deletion here: the
    /// tombstones its commit writes.
    package var deletions: [NameKey: Int64] {
        var out: [NameKey: Int64] = [:]
        for c in changes where c.kind == .deleted { out[NameKey(c.recordName)] = max(out[NameKey(c.recordName)] ?? 0, c.seq) }
        return out
    }
}
