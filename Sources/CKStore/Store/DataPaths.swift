import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where everything lives under the data directory (see Docs/storage.md).
package struct DataPaths: Sendable {
    /// The root and the paths made once, in one object: the paths are copied into every store
    /// a request opens, and a copy is one reference counted, not one per path (the counts of
    /// shared strings are what the threads of `ck serve` contend for).
    private let made: MadePaths

    package var root: String { made.root }

    /// The root is resolved once (links above it are the user's choice); below it, nothing is
    /// ever reached through a link.
    package init(root: String) {
        made = MadePaths(root: DataPaths.resolve(root))
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
    var deviceFile: String { made.deviceFile }
    var usersDirectory: String { made.usersDirectory }
    func userFile(appleID: String) -> String { usersDirectory + "/" + PathEncoding.component(Self.lowercased(appleID)) + ".json" }

    /// An ASCII name without A–Z is its own lowercase: `lowercased()` only when there is a letter
    /// to lower (every request `ck serve` answers finds its caller's file).
    static func lowercased(_ s: String) -> String {
        s.utf8.allSatisfy { $0 < 0x80 && !($0 >= 0x41 && $0 <= 0x5A) } ? s : s.lowercased()
    }
    var assetsDirectory: String { root + "/assets" }
    var configFile: String { root + "/config.json" }
    /// The faults `ck fault add` arms (Docs/faults.md), and the lock taken to change them.
    var faultsFile: String { made.faultsFile }
    var faultsLock: String { made.faultsLock }

    /// The web sessions of `ck serve` (ckWebAuthToken), one file per session named by the
    /// SHA-256 of its token (Docs/serve.md), and the lock taken to create, rotate or revoke them.
    var webSessionsDirectory: String { made.webSessionsDirectory }
    var webSessionsLock: String { root + "/web-sessions.lock" }
    /// The lock taken to change a container's API tokens or server-to-server keys.
    var authLock: String { root + "/auth.lock" }

    /// A container environment's API tokens and server-to-server keys (CloudKit Console).
    func apiTokensFile(_ container: String, _ env: Environment) -> String { environment(container, env) + "/api-tokens.json" }
    func serverKeysFile(_ container: String, _ env: Environment) -> String { environment(container, env) + "/server-keys.json" }

    package func container(_ id: String) -> String { root + "/containers/" + PathEncoding.component(id, limit: 255) }

    package func environment(_ container: String, _ env: Environment) -> String {
        made.environments.directory(container, env) { self.container(container) + "/" + env.rawValue }
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

/// A data directory's root and the paths under it that `ck serve` asks for on every request,
/// made once.
private final class MadePaths: Sendable {
    let root: String
    let deviceFile: String
    let usersDirectory: String
    let faultsFile: String
    let faultsLock: String
    let webSessionsDirectory: String
    let environments = EnvironmentDirectories()

    init(root: String) {
        self.root = root
        deviceFile = root + "/device.json"
        usersDirectory = root + "/users"
        faultsFile = root + "/faults.json"
        faultsLock = root + "/faults.lock"
        webSessionsDirectory = root + "/web-sessions"
    }
}

/// The directories of the container environments asked for, each made once: every request
/// `ck serve` answers builds several paths under one (its database, API tokens, reset marker),
/// and making one cost more than a tenth of a lookup. A few are ever used; the map is emptied
/// past 256, so requests naming endless containers cannot grow it past 256 short names.
private final class EnvironmentDirectories: @unchecked Sendable {
    private struct Key: Hashable {
        let container: String
        let environment: Environment
    }

    private let lock = NSLock()
    private var made: [Key: String] = [:]

    func directory(_ container: String, _ env: Environment, make: () -> String) -> String {
        // Only names a container can have: ASCII (where String's equality, canonical
        // equivalence, is byte equality, so two names on disk are never one key) and at most
        // 255 bytes (what a client names unchecked — a long-poll's URL — cannot fill the map).
        guard container.utf8.count <= Names.maxLength, container.utf8.allSatisfy({ $0 < 0x80 }) else { return make() }
        let key = Key(container: container, environment: env)
        lock.lock()
        if let d = made[key] {
            lock.unlock()
            return d
        }
        lock.unlock()
        let d = make()
        lock.lock()
        if made.count >= 256 { made.removeAll(keepingCapacity: true) }
        made[key] = d
        lock.unlock()
        return d
    }
}
