import CKJSON
import CKModel

/// The remotes of a data directory (`ck remote add NAME URL`), as git keeps them in
/// `.git/config`: a name and the Web Services prefix it stands for, with its container and
/// environment. `remotes.json` holds no credential: those live outside the data directory.
package struct RemoteList {
    package struct Entry: Equatable, Sendable {
        package var name: String
        package var url: String
        package var added: Int64
        package init(name: String, url: String, added: Int64) {
            self.name = name
            self.url = url
            self.added = added
        }
    }

    let paths: DataPaths

    package init(paths: DataPaths) { self.paths = paths }

    private var document: LockedDocument<[Entry]> {
        LockedDocument(paths.root + "/remotes.json", lock: paths.root + "/remotes.lock", decode: { j in
            guard let j else { return [] }
            guard let o = j["remotes"]?.objectValue else { throw CloudKitError.internalError("remotes.json has no 'remotes' object") }
            return try o.keys.sorted().map { name in
                guard let url = o[name]?["url"]?.stringValue else { throw CloudKitError.internalError("remotes.json: remote '\(name)' has no url") }
                return Entry(name: name, url: url, added: o[name]?["added"]?.int64Value ?? 0)
            }
        }, encode: { entries in
            if entries.isEmpty { return nil }
            var o: [String: JSONValue] = [:]
            for e in entries { o[e.name] = .object(["url": .string(e.url), "added": .int(e.added)]) }
            return .object(["schemaVersion": .int(FileFormat.schemaVersion), "remotes": .object(o)])
        })
    }

    package func all() throws -> [Entry] { try document.read() }

    package func entry(_ name: String) throws -> Entry {
        guard let e = try all().first(where: { $0.name == name }) else { throw RemoteList.noSuchRemote(name) }
        return e
    }

    package static func noSuchRemote(_ name: String) -> CloudKitError {
        CloudKitError(.notFound, "no remote named '\(name)' (see 'ck remote list')")
    }

    /// A remote's name: what git allows in a remote name, kept to a portable set so that it can
    /// name a directory of tracking state.
    package static func validate(_ name: String) throws {
        let ok = !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E
        } && name.utf8.first.map { $0 != 0x2D && $0 != 0x2E } == true
        guard ok else {
            throw CloudKitError.badRequest("'\(name)' is not a remote name: 1 to 64 letters, digits, '-', '_' or '.', not starting with '-' or '.'")
        }
    }

    package func add(_ entry: Entry) throws {
        try RemoteList.validate(entry.name)
        try document.update { list in
            if list.contains(where: { $0.name == entry.name }) {
                throw CloudKitError(.exists, "remote '\(entry.name)' already exists (see 'ck remote show \(entry.name)')")
            }
            list.append(entry)
            list.sort { $0.name < $1.name }
        }
    }

    /// Removes the remote and, under the same lock, its tracking state in every database.
    package func remove(_ name: String) throws -> Entry {
        let held = try RemoteTrackingTree(paths: paths).holdOperations(remote: name)
        defer { held.forEach { $0.unlock() } }
        return try document.update { list in
            guard let i = list.firstIndex(where: { $0.name == name }) else { throw RemoteList.noSuchRemote(name) }
            try RemoteTrackingTree(paths: paths).removeAll(remote: name)
            return list.remove(at: i)
        }
    }

    package func rename(_ old: String, to new: String) throws -> Entry {
        try RemoteList.validate(new)
        let held = try RemoteTrackingTree(paths: paths).holdOperations(remote: old)
        defer { held.forEach { $0.unlock() } }
        return try document.update { list in
            guard let i = list.firstIndex(where: { $0.name == old }) else { throw RemoteList.noSuchRemote(old) }
            if list.contains(where: { $0.name == new }) { throw CloudKitError(.exists, "remote '\(new)' already exists") }
            try RemoteTrackingTree(paths: paths).renameAll(remote: old, to: new)
            list[i].name = new
            list.sort { $0.name < $1.name }
            return list.first { $0.name == new }!
        }
    }
}
