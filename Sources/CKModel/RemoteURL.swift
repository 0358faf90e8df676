/// A remote: a CloudKit Web Services prefix with its container and environment,
/// `https://api.apple-cloudkit.com/database/1/iCloud.com.example.App/development`, or the same
/// path on a `ck serve` (`http://127.0.0.1:8484/database/1/…`). The database is chosen per
/// command, never by the remote.
public struct RemoteURL: Equatable, Sendable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int
    /// Whatever comes before `/database/1/` (a server mounted under a path), without a
    /// trailing slash; usually empty.
    public var mount: String
    public var container: String
    public var environment: Environment

    public static let appleHost = "api.apple-cloudkit.com"

    public init(_ text: String) throws {
        func bad(_ why: String) -> CloudKitError {
            CloudKitError.badRequest("'\(RemoteURL.shown(text))' is not a Web Services URL: \(why) (expected https://\(RemoteURL.appleHost)/database/1/CONTAINER/development|production)")
        }
        let a: Authority
        do { a = try RemoteURL.authority(text) } catch let e as CloudKitError { throw bad(e.reason) }
        (scheme, host, port) = (a.scheme, a.host, a.port)
        guard !text.contains("?"), !text.contains("#") else { throw bad("it must have no query or fragment") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else { throw bad("it contains a space or a control character") }
        let rest = a.rest
        var parts = rest.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if parts.last == "" { parts = parts.dropLast() }
        guard let d = parts.firstIndex(of: "database"), parts.index(after: d) < parts.endIndex, parts[parts.index(after: d)] == "1" else {
            throw bad("its path has no /database/1/")
        }
        let mountParts = parts[..<d]
        guard !mountParts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { throw bad("its path has an empty, '.' or '..' segment") }
        mount = mountParts.isEmpty ? "" : "/" + mountParts.joined(separator: "/")
        let tail = Array(parts[parts.index(d, offsetBy: 2)...])
        guard tail.count == 2 else {
            throw bad(tail.count < 2 ? "it must end with the container and the environment" : "it must end after the environment (the database is chosen with --db)")
        }
        container = String(tail[0])
        do { try Names.validateContainerID(container) } catch let e as CloudKitError { throw bad(e.reason) }
        guard let env = Environment(rawValue: String(tail[1])) else { throw bad("'\(tail[1])' is not an environment (development or production)") }
        environment = env
    }

    /// The origin: `https://host` with the port when it is not the scheme's.
    public var origin: String { Authority(scheme: scheme, host: host, port: port, rest: "").origin }

    /// The path of an operation in a database: `/database/1/C/E/private/records/query`.
    public func path(_ scope: DatabaseScope, _ operation: String) -> String {
        mount + "/database/1/" + container + "/" + environment.rawValue + "/" + scope.rawValue + "/" + operation
    }

    /// The canonical spelling (what `remotes.json` keeps, and what credentials are filed under).
    public var description: String { origin + mount + "/database/1/" + container + "/" + environment.rawValue }

    public var isProduction: Bool { environment == .production }

    /// A URL as a message may show it: no user information, query or fragment, which is where
    /// a token typed by mistake would be.
    public static func shown(_ text: String) -> String {
        var s = Substring(text)
        var cut = false
        if let q = s.firstIndex(where: { $0 == "?" || $0 == "#" }) { s = s[..<q]; cut = true }
        if let scheme = s.range(of: "://"), let at = s[scheme.upperBound...].prefix(while: { $0 != "/" }).lastIndex(of: "@") {
            s = s[..<scheme.upperBound] + "…" + s[at...]
            cut = true
        }
        return Names.describe(String(s)) + (cut ? "…" : "")
    }

    /// The scheme, host and port of an http(s) URL, and the rest after them.
    public struct Authority: Sendable {
        public var scheme: String
        public var host: String
        public var port: Int
        public var rest: Substring
        public var origin: String {
            let h = host.contains(":") ? "[" + host + "]" : host
            return scheme + "://" + h + (port == (scheme == "https" ? 443 : 80) ? "" : ":" + String(port))
        }
    }

    /// An http(s) URL's scheme, host (lowercased, an IPv6 address without its brackets) and port.
    public static func authority(_ text: String) throws -> Authority {
        func bad(_ why: String) -> CloudKitError { CloudKitError.badRequest(why) }
        var rest = Substring(text)
        let scheme: String
        if rest.hasPrefix("https://") { scheme = "https"; rest = rest.dropFirst(8) } else if rest.hasPrefix("http://") { scheme = "http"; rest = rest.dropFirst(7) } else {
            throw bad("it must start with https:// (or http:// for a ck serve)")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        rest = rest.dropFirst(authority.count)
        guard !authority.contains("@") else { throw bad("credentials do not belong in the URL; use 'ck remote login' or 'ck remote key set'") }
        var h = Substring(authority)
        var p: Int? = nil
        if h.hasPrefix("[") {
            guard let close = h.firstIndex(of: "]") else { throw bad("an IPv6 address must end with ']'") }
            let after = h[h.index(after: close)...]
            if after.hasPrefix(":") { p = Int(after.dropFirst()); if p == nil { throw bad("the port is not a number") } } else if !after.isEmpty { throw bad("unexpected text after the IPv6 address") }
            h = h[h.index(after: h.startIndex)..<close]
        } else if let colon = h.lastIndex(of: ":") {
            guard let n = Int(h[h.index(after: colon)...]) else { throw bad("the port is not a number") }
            p = n
            h = h[..<colon]
        }
        guard !h.isEmpty else { throw bad("it names no host") }
        if let p, !(1...65535).contains(p) { throw bad("the port must be 1 to 65535") }
        return Authority(scheme: scheme, host: String(h).lowercased(), port: p ?? (scheme == "https" ? 443 : 80), rest: rest)
    }
}
