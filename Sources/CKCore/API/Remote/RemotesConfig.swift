import CKJSON
import CKModel
import CKStore

/// The data directory's remotes (`ck remote add|list|show|remove|rename`): names for Web
/// Services prefixes, as git's remotes are names for URLs. ck's own operations: no endpoint,
/// no account. A remote holds no credential (those live outside the data directory).
public struct RemoteEntry: Sendable, Equatable {
    public let name: String
    public let url: RemoteURL
    public let added: Int64

    public init(name: String, url: RemoteURL, added: Int64) {
        self.name = name
        self.url = url
        self.added = added
    }

    /// `{name, url, containerIdentifier, environment, production?}`.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(name), "url": .string(url.description), "containerIdentifier": .string(url.container),
            "environment": .string(url.environment.rawValue), "added": .int(added),
        ]
        if url.isProduction { o["production"] = true }
        return .object(o)
    }
}

extension CloudKitAPI {
    var remoteList: RemoteList { RemoteList(paths: store.paths) }

    public func remotes() throws -> [RemoteEntry] {
        try remoteList.all().map { try Self.remoteEntry($0) }
    }

    public func remote(named name: String) throws -> RemoteEntry {
        try RemoteList.validate(name)
        return try Self.remoteEntry(try remoteList.entry(name))
    }

    static func remoteEntry(_ e: RemoteList.Entry) throws -> RemoteEntry {
        RemoteEntry(name: e.name, url: try RemoteURL(e.url), added: e.added)
    }

    /// Adds a remote; EXISTS when the name is taken. The URL is kept in its canonical spelling.
    @discardableResult
    public func addRemote(_ name: String, url: RemoteURL) throws -> RemoteEntry {
        let entry = RemoteList.Entry(name: name, url: url.description, added: clock.now())
        try remoteList.add(entry)
        return try Self.remoteEntry(entry)
    }

    /// Removes a remote and its tracking state in every database (the local records stay).
    public func removeRemote(_ name: String) throws -> RemoteEntry {
        try RemoteList.validate(name)
        return try Self.remoteEntry(try remoteList.remove(name))
    }

    /// Renames a remote, its tracking state with it.
    public func renameRemote(_ old: String, to new: String) throws -> RemoteEntry {
        try RemoteList.validate(old)
        return try Self.remoteEntry(try remoteList.rename(old, to: new))
    }

    /// `{remotes: [...]}`, by name.
    public func listRemotes() throws -> DocumentBody {
        DocumentBody(["remotes": .array(try remotes().map(\.json))], listKey: "remotes")
    }
}
