/// Where everything lives under the data directory (see Docs/storage.md).
public struct DataPaths: Sendable {
    /// Version of every file format ck writes; each file carries it as `schemaVersion`.
    public static let schemaVersion: Int64 = 1

    public let root: String

    public init(root: String) {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    public var markerFile: String { root + "/ck.json" }
    public var deviceFile: String { root + "/device.json" }
    public var usersDirectory: String { root + "/users" }
    public func userFile(appleID: String) -> String { usersDirectory + "/" + PathEncoding.component(appleID.lowercased()) + ".json" }
    public var assetsDirectory: String { root + "/assets" }
    public var configFile: String { root + "/config.json" }

    public func container(_ id: String) -> String { root + "/containers/" + PathEncoding.component(id) }

    public func environment(_ container: String, _ env: Environment) -> String {
        self.container(container) + "/" + env.rawValue
    }

    /// The public database is one per environment; private and shared are one per user.
    public func database(_ container: String, _ env: Environment, _ scope: DatabaseScope, user: String?) -> String {
        let e = environment(container, env)
        switch scope {
        case .public: return e + "/public"
        case .private: return e + "/private/" + PathEncoding.component(user ?? "_")
        case .shared: return e + "/shared/" + PathEncoding.component(user ?? "_")
        }
    }

    /// A user's devices and their pending notifications.
    public func notifications(_ container: String, _ env: Environment, user: String) -> String {
        environment(container, env) + "/notifications/" + PathEncoding.component(user)
    }

    public static func zone(database: String, zoneName: String) -> String {
        database + "/zones/" + PathEncoding.component(zoneName)
    }
}
