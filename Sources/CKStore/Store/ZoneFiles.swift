import CKJSON
import CKModel

/// The files a commit derives from the history — each changed record's file, each changed
/// reference-index file and each deleted name's tombstone — written as temporary files and
/// renamed into place: a command writes them before the history commits (so a full disk fails
/// the commit cleanly), a server's publisher after the answer (Database.FileTiming).
package struct PreparedFiles {
    package struct Item {
        package let directory: Directory
        /// nil: the file is to be removed.
        package let temporary: String?
        package let name: String
    }
    package var items: [Item] = []
    /// Shard directories this commit made, removed again if it is abandoned.
    var madeDirectories: [(parent: Directory, name: String)] = []

    /// The directories it holds open until published (each item's shard).
    var directoryCount: Int { Set(items.map { ObjectIdentifier($0.directory) }).count }
}

/// What a commit's derived files are made from: its records (nil: deleted), reference-index
/// entries (empty: removed) and tombstones (name → its latest deletion's entry).
struct DerivedFiles {
    let records: [NameKey: Record?]
    let refs: [NameKey: [NameKey: [String]]]
    let tombstones: [NameKey: Int64]
}

extension Transaction {
    var derivedFiles: DerivedFiles { DerivedFiles(records: records, refs: refs, tombstones: deletions) }
}

extension ZoneStore {
    func prepare(_ d: DerivedFiles) throws -> PreparedFiles { try prepare(records: d.records, refs: d.refs, tombstones: d.tombstones) }

    /// Prepares the files for records (nil: deleted), reference-index entries (empty:
    /// removed) and tombstones (name → its latest deletion's entry). On failure nothing is left
    /// behind.
    package func prepare(records: [NameKey: Record?], refs: [NameKey: [NameKey: [String]]], tombstones: [NameKey: Int64] = [:]) throws -> PreparedFiles {
        var p = PreparedFiles()
        do {
            guard let zoneDir = try Directory.open(directory) else { throw CloudKitError.internalError("zone directory '\(directory)' is missing") }
            var tops: [String: Directory] = [:]
            var shards: [String: Directory] = [:]
            func shard(_ top: String, _ name: String) throws -> Directory {
                let s = PathEncoding.shard(name)
                if let d = shards[top + "/" + s] { return d }
                if tops[top] == nil { tops[top] = try opened(zoneDir, top) }
                let d = try opened(tops[top]!, s)
                shards[top + "/" + s] = d
                return d
            }
            /// A subdirectory, made if missing (and then noted, so a failed commit removes it).
            func opened(_ parent: Directory, _ name: String) throws -> Directory {
                if let d = try parent.subdirectory(name) { return d }
                p.madeDirectories.append((parent, name))
                return try parent.subdirectory(name, create: true)!
            }
            // The names alone are sorted: sorting them with their records moved each record
            // (a dozen references) at every step, 4 % of an import.
            let names = records.keys.sorted()
            var targets: [(directory: Directory, file: String)] = []
            for k in names {
                targets.append((try shard("records", k.string), PathEncoding.component(k.string) + ".json"))
            }
            // Encoding and writing each record's temporary file is most of a large commit's
            // work: done on every core (in order, on one, when a fault is armed).
            let temporaries = try RecordFileWriter.prepare(names.map { records[$0]! }, in: targets.map(\.directory))
            for (i, t) in targets.enumerated() {
                p.items.append(.init(directory: t.directory, temporary: temporaries[i], name: t.file))
            }
            for (k, m) in refs.sorted(by: { $0.key < $1.key }) {
                let target = k.string
                let d = try shard("refs", target)
                let file = PathEncoding.component(target) + ".json"
                if m.isEmpty {
                    p.items.append(.init(directory: d, temporary: nil, name: file))
                } else {
                    let bytes = Array(JSONWriter.pretty(ZoneStore.referrersJSON(target: target, m)).utf8)
                    p.items.append(.init(directory: d, temporary: try d.prepare(bytes), name: file))
                }
            }
            for (k, seq) in tombstones.sorted(by: { $0.key < $1.key }) {
                let d = try shard(ZoneStore.deletedDirectoryName, k.string)
                let bytes = Array(JSONWriter.pretty(ZoneStore.tombstoneJSON(recordName: k.string, seq: seq)).utf8)
                p.items.append(.init(directory: d, temporary: try d.prepare(bytes), name: PathEncoding.component(k.string) + ".json"))
            }
        } catch {
            discard(p)
            throw error
        }
        return p
    }

    /// Renames the prepared files into place and removes the deleted ones.
    /// A large commit's renames are shared by the cores (each directory takes its own); in
    /// order, on one, when a fault is armed, so crash points stay where they are. They may be
    /// done in any order: the history is committed, and readers take from it what the files do
    /// not hold yet. On failure, what was not published is discarded and the next writer of the
    /// zone (or `ck fsck`) publishes it again from the history.
    package func publish(_ p: PreparedFiles) throws {
        func publish(_ item: PreparedFiles.Item) throws {
            if let t = item.temporary { try item.directory.publish(t, as: item.name) } else { try item.directory.remove(item.name) }
        }
        if p.items.count < RecordFileWriter.parallelFrom || CrashPoints.isArmed {
            for (i, item) in p.items.enumerated() {
                do { try publish(item) } catch {
                    discard(PreparedFiles(items: Array(p.items[(i + 1)...]), madeDirectories: []))
                    throw error
                }
            }
            return
        }
        let failures = Parallel.map(p.items.count, chunk: 16) { i -> Error? in
            do { try publish(p.items[i]); return nil } catch { return error }
        }
        guard let first = failures.firstIndex(where: { $0 != nil }) else { return }
        discard(PreparedFiles(items: p.items.indices.filter { failures[$0] != nil }.map { p.items[$0] }, madeDirectories: []))
        throw failures[first]!
    }

    package func discard(_ p: PreparedFiles) {
        for item in p.items { if let t = item.temporary { item.directory.discard(t) } }
        for (parent, name) in p.madeDirectories.reversed() { parent.removeIfEmpty(name) }
    }

    /// Makes every file written since the last sync durable.
    func syncFiles() {
        (try? Directory.open(directory))??.syncFileSystem()
    }
}
