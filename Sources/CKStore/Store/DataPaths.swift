import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where everything lives under the data directory (see Docs/storage.md).
package struct DataPaths: Sendable {
    package let root: String

    /// The root is resolved once (links above it are the user's choice); below it, nothing is
    /// ever reached through a link.
    package init(root: String) {
        self.root = DataPaths.resolve(root)
    }

    /// An absolute path with every link in its existing part resolved, and `.` and `..`
    /// taken out of the rest.
    package static func resolve(_ path: String) -> String {
        var comps = path.split(separator: "/").map(String.init)
        var rest: [String] = []
        while true {
            if let r = realpath(absolute(comps), nil) {
                var base = String(cString: r).split(separator: "/").map(String.init)
                free(r)
                for c in rest where c != "." { if c == ".." { _ = base.popLast() } else { base.append(c) } }
                return absolute(base)
            }
            guard let last = comps.popLast() else { return absolute(rest) }
            rest.insert(last, at: 0)
        }
    }

    /// `/` and the components, each after a `/`. (Not `joined(separator:)`: unspecialized, the
    /// standard library's looks up its generic types' witnesses at its first call, a sixth of
    /// what `ck record get` spent.)
    private static func absolute(_ comps: [String]) -> String {
        var out = ""
        for c in comps {
            out += "/"
            out += c
        }
        return out.isEmpty ? "/" : out
    }

    var markerFile: String { root + "/ck.json" }
    var deviceFile: String { root + "/device.json" }
    var usersDirectory: String { root + "/users" }
    func userFile(appleID: String) -> String { usersDirectory + "/" + PathEncoding.component(appleID.lowercased()) + ".json" }
    var assetsDirectory: String { root + "/assets" }
    var configFile: String { root + "/config.json" }
    /// The faults `ck fault add` arms (Docs/faults.md), and the lock taken to change them.
    var faultsFile: String { root + "/faults.json" }
    var faultsLock: String { root + "/faults.lock" }

    /// The web sessions of `ck serve` (ckWebAuthToken), one file per session named by the
    /// SHA-256 of its token (Docs/serve.md), and the lock taken to create, rotate or revoke them.
    var webSessionsDirectory: String { root + "/web-sessions" }
    var webSessionsLock: String { root + "/web-sessions.lock" }
    /// The lock taken to change a container's API tokens or server-to-server keys.
    var authLock: String { root + "/auth.lock" }

    /// A container environment's API tokens and server-to-server keys (CloudKit Console).
    func apiTokensFile(_ container: String, _ env: Environment) -> String { environment(container, env) + "/api-tokens.json" }
    func serverKeysFile(_ container: String, _ env: Environment) -> String { environment(container, env) + "/server-keys.json" }

    package func container(_ id: String) -> String { root + "/containers/" + PathEncoding.component(id, limit: 255) }

    package func environment(_ container: String, _ env: Environment) -> String {
        self.container(container) + "/" + env.rawValue
    }

    /// The public database is one per environment; private and shared are one per user.
    package func database(_ container: String, _ env: Environment, _ scope: DatabaseScope, user: String?) -> String {
        let e = environment(container, env)
        switch scope {
        case .public: return e + "/public"
        case .private: return e + "/private/" + PathEncoding.component(user ?? "_")
        case .shared: return e + "/shared/" + PathEncoding.component(user ?? "_")
        }
    }

    /// A user's devices and their pending notifications.
    package func notifications(_ container: String, _ env: Environment, user: String) -> String {
        environment(container, env) + "/notifications/" + PathEncoding.component(user)
    }

    package static func zone(database: String, zoneName: String) -> String {
        database + "/zones/" + PathEncoding.component(zoneName)
    }
}
