import CKHTTP
import Foundation

/// The loopback end of a terminal sign-in (`ck remote login`): the API token's *Sign In
/// Callback* is set to URL Redirect with `http://127.0.0.1:PORT/…`; after the user signs in,
/// the browser is sent there with `?ckWebAuthToken=T` (Apple's page also sets `ckSession=T`).
/// This listener takes the first such request, puts back a `+` the query decoding turned into
/// a space, and answers the browser with a page that holds no token (after a redirect, so
/// that the token leaves the address bar and the history).
public final class SignInCallback: HTTPHandler, @unchecked Sendable {
    private let lock = NSCondition()
    private var token: String?
    private var pageShown = false
    private var server: HTTPServer?

    public init() {}

    /// Starts listening on 127.0.0.1:`port` (0: any free port); answers the port.
    public func start(port: UInt16) throws -> UInt16 {
        let s = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port, maxConnections: 16), handler: self)
        try s.start()
        server = s
        return s.port
    }

    /// The token, once a callback brought one; nil when `timeout` seconds pass first.
    public func wait(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while token == nil, lock.wait(until: deadline) {}
        return token
    }

    /// Stops listening once the browser has had its page (or after `grace` seconds): the
    /// redirect that takes the token out of the address bar comes back here for it.
    public func stop(grace: Double = 2) {
        let deadline = Date().addingTimeInterval(grace)
        lock.lock()
        while token != nil, !pageShown, lock.wait(until: deadline) {}
        lock.unlock()
        server?.stop(grace: 1)
    }

    /// The token a callback's query carries: `ckSession` first, then `ckWebAuthToken` (Apple's
    /// page sets both; either alone is taken), percent-decoded, a `+` restored where decoding
    /// as a form made a space.
    public static func token(fromQuery query: String) -> String? {
        var found: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2 else { continue }
            let key = String(kv[0])
            guard key == "ckSession" || key == "ckWebAuthToken" else { continue }
            // A literal `+` in a query means a space to a form decoder; a token has no spaces.
            let raw = String(kv[1]).replacingOccurrences(of: "+", with: "%2B")
            guard let v = raw.removingPercentEncoding?.replacingOccurrences(of: " ", with: "+"), !v.isEmpty else { continue }
            found[key] = v
        }
        return found["ckSession"] ?? found["ckWebAuthToken"]
    }

    public func admit(_ head: HTTPRequestHead) -> HTTPAdmission { .readBody(maxBytes: 0) }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let head = request.head
        if head.method == "GET", let q = head.query, let t = Self.token(fromQuery: q) {
            lock.lock()
            if token == nil { token = t }
            lock.broadcast()
            lock.unlock()
            var h = HTTPHeaders()
            h.add("Location", "/signed-in")
            h.add("Cache-Control", "no-store")
            h.add("Referrer-Policy", "no-referrer")
            return HTTPResponse(status: 302, headers: h)
        }
        if head.method == "GET", head.path == "/signed-in" {
            lock.lock()
            pageShown = true
            lock.broadcast()
            lock.unlock()
            return page(200, "Signed in", "ck has the sign-in. You can close this window and go back to the terminal.")
        }
        return page(404, "Not a sign-in", "This address only takes the sign-in callback of ck remote login.")
    }

    private func page(_ status: Int, _ title: String, _ text: String) -> HTTPResponse {
        var h = HTTPHeaders()
        h.add("Content-Type", "text/html; charset=utf-8")
        h.add("Cache-Control", "no-store")
        h.add("Content-Security-Policy", "default-src 'none'")
        let body = "<!doctype html><meta charset=utf-8><title>ck — \(title)</title><h1>\(title)</h1><p>\(text)</p>\n"
        return HTTPResponse(status: status, headers: h, body: Array(body.utf8))
    }

    public func refusal(status: Int, reason: String) -> HTTPResponse { page(status, "Refused", "The request was refused.") }
    public func log(_ head: HTTPRequestHead?, status: Int, milliseconds: Double, note: String?) {}
}
