import CKCore
import CKModel

/// What a request's path asks for, as `api.apple-cloudkit.com` lays its paths out
/// (reference §2, cloudkit-js.md §2), and the URLs ck serve hands out itself.
enum WebServicesRoute: Equatable, Sendable {
    /// `/database/1/{container}/{environment}/{public|private|shared}/{endpoint}`.
    case database(container: String, environment: Environment, scope: DatabaseScope, endpoint: Endpoint)
    /// `/device/1/{container}/{environment}/tokens/{create|register}`.
    case device(container: String, environment: Environment, endpoint: Endpoint)
    /// `/upload/{sealed token}`: an `assets/upload` URL, to POST an asset's bytes to.
    case upload(token: String)
    /// `/assets/{2 hex}/{64 hex}`: an asset's `downloadURL`.
    case asset(path: String)
    /// `/webcourier/{container}/{environment}/{apnsToken}`: a web client's long-poll.
    case webCourier(container: String, environment: Environment, apnsToken: String)
    /// `/signin/{container}/{environment}`: the `redirectURL` of AUTHENTICATION_REQUIRED.
    case signIn(container: String, environment: Environment)
    /// `/ck/cloudkit-config.js`: the script that points CloudKit JS at this server.
    case configScript
    /// `/console` and what is under it (ConsoleRoutes): `rest` is the path after `/console`.
    case console(rest: String)

    /// A path CloudKit answers with 405 Method Not Allowed rather than 404: the token
    /// endpoints where Apple's reference documents them, under `/database/1/…`.
    struct MethodNotAllowed: Error {
        let error: CloudKitError
    }

    /// The route of a path (the target before `?`, undecoded: CloudKit JS encodes nothing), or
    /// the NOT_FOUND error naming what is wrong with it.
    static func parse(_ path: String) throws -> WebServicesRoute {
        guard path.hasPrefix("/") else { throw notFound(path, "a path starts with '/'") }
        if path == "/console" || path.hasPrefix("/console/") { return .console(rest: String(path.dropFirst(8))) }
        let parts = segments(path)
        let first = parts[0]
        switch first {
        case "database":
            // Apple's reference puts tokens/create and tokens/register here, with or without a
            // database; CloudKit answers 405 there (they are /device/1/…, as CloudKit JS sends them).
            if parts.count >= 6, parts[1] == "1", let e = Environment(rawValue: parts[3]),
               let endpoint = Endpoint(rawValue: joined(parts[(parts[4] == "tokens" ? 4 : 5)...])), endpoint.module == .device {
                throw MethodNotAllowed(error: CloudKitError(.notFound, "no such path '\(shown(path))': \(endpoint.rawValue) is an endpoint of the device module, POST /device/1/\(Names.describe(parts[2]))/\(e.rawValue)/\(endpoint.rawValue) (Apple's Web Services reference documents it under /database/1/…, where CloudKit answers 405)"))
            }
            guard parts.count >= 6, parts[1] == "1" else {
                throw notFound(path, "a database path is /database/1/{container}/{environment}/{public|private|shared}/{endpoint}")
            }
            let env = try environment(parts[3], path)
            guard let scope = DatabaseScope(rawValue: parts[4]) else {
                throw notFound(path, "the database is public, private or shared, not '\(Names.describe(parts[4]))'")
            }
            let name = joined(parts[5...])
            guard let endpoint = Endpoint(rawValue: name), endpoint.module == .database else {
                throw notFound(path, "'\(Names.describe(name))' is not a CloudKit Web Services endpoint of the database module")
            }
            return .database(container: parts[2], environment: env, scope: scope, endpoint: endpoint)
        case "device":
            guard parts.count >= 5, parts[1] == "1" else { throw notFound(path, "a device path is /device/1/{container}/{environment}/tokens/{create|register}") }
            let name = joined(parts[4...])
            guard let endpoint = Endpoint(rawValue: name), endpoint.module == .device else {
                throw notFound(path, "'\(Names.describe(name))' is not an endpoint of the device module (tokens/create, tokens/register)")
            }
            return .device(container: parts[2], environment: try environment(parts[3], path), endpoint: endpoint)
        case "upload" where parts.count == 2 && !parts[1].isEmpty:
            return .upload(token: parts[1])
        case "assets" where parts.count == 3:
            return .asset(path: parts[1] + "/" + parts[2])
        case "webcourier" where parts.count == 4:
            return .webCourier(container: parts[1], environment: try environment(parts[2], path), apnsToken: parts[3])
        case "signin" where parts.count == 3:
            return .signIn(container: parts[1], environment: try environment(parts[2], path))
        case "ck" where parts.count == 2 && parts[1] == "cloudkit-config.js":
            return .configScript
        default:
            throw notFound(path, "ck serve answers /database/1/…, /device/1/…, the upload, asset, web courier and sign-in URLs it hands out, /ck/cloudkit-config.js, and its console at /console/")
        }
    }

    /// The path's segments after its leading `/`, split on the bytes: asked of every request.
    /// (A `/` is ASCII, so every piece of a valid string is valid, and decoding repairs nothing.)
    static func segments(_ path: String) -> [String] {
        var path = path
        return path.withUTF8 { u in
            var parts: [String] = []
            parts.reserveCapacity(8)
            var start = 1
            for k in 1...u.count where k == u.count || u[k] == UInt8(ascii: "/") {
                parts.append(String(decoding: UnsafeBufferPointer(rebasing: u[start..<k]), as: UTF8.self))
                start = k + 1
            }
            return parts
        }
    }

    /// The segments back into an endpoint's name. (Not `joined(separator:)`: unspecialized
    /// across modules, the standard library's cost more than the rest of the route.)
    private static func joined(_ parts: ArraySlice<String>) -> String {
        var out = ""
        for k in parts.indices {
            if k != parts.startIndex { out += "/" }
            out += parts[k]
        }
        return out
    }

    private static func environment(_ s: String, _ path: String) throws -> Environment {
        guard let e = Environment(rawValue: s) else {
            throw notFound(path, "the environment is development or production, not '\(Names.describe(s))'")
        }
        return e
    }

    private static func notFound(_ path: String, _ why: String) -> CloudKitError {
        CloudKitError(.notFound, "no such path '\(shown(path))': \(why)")
    }

    /// A path as a reason shows it: whole up to 200 characters (its interesting part is past
    /// the container's name), control characters escaped.
    private static func shown(_ path: String) -> String { Names.describe(path, limit: 200) }

    /// The container and environment a route is about, for authentication.
    var containerAndEnvironment: (String, Environment)? {
        switch self {
        case .database(let c, let e, _, _), .device(let c, let e, _), .webCourier(let c, let e, _), .signIn(let c, let e): return (c, e)
        case .upload, .asset, .configScript, .console: return nil
        }
    }
}
