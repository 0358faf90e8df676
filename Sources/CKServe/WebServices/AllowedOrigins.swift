import CKCore
import CKHTTP
import CKModel

/// The web pages whose scripts may read ck serve's answers (CORS): `--allow-origin ORIGIN`,
/// each an origin (`http://localhost:3000`) or one with any port (`http://localhost:*`), or
/// `*`. By default pages served from this machine: `http://localhost:*`, `http://127.0.0.1:*`.
struct AllowedOrigins {
    let patterns: [String]
    /// The server's own origins: its pages' requests are not cross-origin.
    let own: [String]

    static let defaults = ["http://localhost:*", "http://127.0.0.1:*"]

    /// `serverURL`: the server's own origin (`http://127.0.0.1:8484`), also as `localhost`.
    init(_ patterns: [String], serverURL: String? = nil) {
        self.patterns = patterns.isEmpty ? Self.defaults : patterns
        self.own = [serverURL, serverURL?.replacingOccurrences(of: "//127.0.0.1:", with: "//localhost:")].compactMap { $0 }
    }

    func allows(_ origin: String) -> Bool {
        patterns.contains { p in
            if p == "*" || p == origin { return true }
            guard p.hasSuffix(":*"), origin.hasPrefix(p.dropLast()) else { return false }
            let port = origin.dropFirst(p.count - 1)
            return !port.isEmpty && port.count <= 5 && port.allSatisfy(\.isASCIIDigit)
        }
    }

    /// Whether `s` is shaped as a web page's origin: `http` or `https`, a host of letters,
    /// digits, `-` and `.` (or a bracketed IPv6 address), an optional port, and nothing after.
    static func isOrigin(_ s: String) -> Bool {
        guard s.utf8.count <= 300 else { return false }
        let rest: Substring
        if s.hasPrefix("http://") { rest = s.dropFirst(7) } else if s.hasPrefix("https://") { rest = s.dropFirst(8) } else { return false }
        let host: Substring, port: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return false }
            port = after.isEmpty ? nil : after.dropFirst()
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            port = parts.count == 2 ? parts[1] : nil
            guard !host.isEmpty, host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." }) else { return false }
        }
        if let p = port { return !p.isEmpty && p.count <= 5 && p.allSatisfy(\.isASCIIDigit) }
        return true
    }

    /// An allowed page's answer carries the CORS headers, and lets its script read the rotated
    /// web auth token.
    func decorate(_ r: inout HTTPResponse, _ head: HTTPRequestHead) {
        guard let origin = head.headers["Origin"] else { return }
        guard allows(origin) else { return note(&r, origin) }
        r.headers.set("Access-Control-Allow-Origin", origin)
        r.headers.set("Vary", "Origin")
        r.headers.set("Access-Control-Expose-Headers", "X-Apple-CloudKit-Web-Auth-Token, X-Apple-CloudKit-Session, Retry-After")
    }

    /// OPTIONS: a browser asking whether a request with custom headers (a server-to-server
    /// signature, a JSON content type) may be sent. CloudKit JS's own requests are "simple"
    /// and need none.
    func preflight(_ head: HTTPRequestHead) -> HTTPResponse {
        var r = HTTPResponse(status: 204)
        guard let origin = head.headers["Origin"] else { return r }
        guard allows(origin) else {
            note(&r, origin)
            return r
        }
        r.headers.set("Access-Control-Allow-Origin", origin)
        r.headers.set("Vary", "Origin")
        r.headers.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        r.headers.set("Access-Control-Allow-Headers", head.headers["Access-Control-Request-Headers"].map { String($0.prefix(1000)) } ?? "Content-Type")
        r.headers.set("Access-Control-Max-Age", "600")
        return r
    }

    /// Tells the log why a page's script cannot read this answer (its browser refuses it,
    /// not the server), and the `--allow-origin` that would let it.
    private func note(_ r: inout HTTPResponse, _ origin: String) {
        guard !own.contains(origin) else { return }
        let shown = Names.describe(String(origin.prefix(200)))
        let refused = "CORS: origin '\(shown)' is not allowed (allowed: \(patterns.joined(separator: ", "))), so its page cannot read the answer; "
        // --allow-origin takes http(s) origins: name it only for an origin it can allow.
        let why: String
        if Self.isOrigin(origin) {
            why = refused + "start ck serve with --allow-origin \(shown) to allow it"
        } else if origin == "null" {
            why = refused + "a page opened from a file (or a sandboxed frame) has origin 'null', which only --allow-origin '*' allows: serve the page over http from an allowed origin (python3 -m http.server 8000, then http://localhost:8000)"
        } else {
            why = refused + "it is not an http(s) origin, so only --allow-origin '*' allows it"
        }
        r.logNote = r.logNote.map { $0 + "; " + why } ?? why
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
