import CKHTTP

/// Who may reach the console: a browser tab of this server's own origin holding the key.
/// Every request under `/console` passes here before its body is read, and is refused unless
///
/// - its `Host` is one of the server's own names (DNS rebinding: a page of another site whose
///   name resolves to 127.0.0.1 sends its own name);
/// - an `Origin` it carries is the server's own, and a `Sec-Fetch-Site` it carries says
///   `same-origin` or `none` (a typed URL or a bookmark): a page of another origin can neither
///   send it requests that act (CSRF) nor read its answers (no CORS headers are ever given);
/// - a call of the console's API or its Web Services carries the key as `X-CK-Console: KEY`.
///   The key reaches the page in the URL's fragment (`/console/#key=…`), which a browser never
///   sends to a server, so it is in no request line, log or `Referer`; the page keeps it in its
///   origin's storage, which is per port. A cookie would not do: cookies are kept per host, not
///   per port (RFC 6265 §8.5), so every other server on 127.0.0.1 the browser visits would be
///   sent it and could replay it. A custom header is also what a form cannot send, and what a
///   page of another origin cannot send without a preflight, which is refused.
///
/// The page, its script and its style need no key: they are the same for everyone and hold no
/// data; without a key the page says where to find one. The page alone may also be opened
/// from elsewhere, as a top-level navigation (a link, or the launch file `ck console` gives the
/// browser, whose navigation is cross-site); never in a frame, and its script, style and
/// calls only from itself.
struct ConsoleGate: Sendable {
    let secret: ConsoleSecret
    /// The origins of the console's own pages: `http://NAME:PORT` for each name of the server.
    let ownOrigins: Set<String>

    /// The header that carries the key.
    static let keyHeader = "X-CK-Console"

    init(secret: ConsoleSecret, hostNames: Set<String>, port: UInt16) {
        self.secret = secret
        ownOrigins = Set(hostNames.map { "http://" + ($0.contains(":") ? "[\($0)]" : $0) + ":\(port)" })
    }

    /// Why a request is refused, for the page and the log (never the key).
    struct Refusal: Error {
        let status: Int
        let reason: String
    }

    /// What a path under `/console` is, for the checks.
    enum Kind {
        /// The page itself (`/console/`).
        case page
        /// Its script and style.
        case file
        /// The console's API or Web Services, which need the key.
        case call
    }

    /// The checks of the head: nil if it may go on, else the refusal.
    func check(_ head: HTTPRequestHead, _ kind: Kind) -> Refusal? {
        guard head.headers["Host"] != nil else {
            return Refusal(status: 400, reason: "the console answers requests that name its host (Host)")
        }
        if let origin = head.headers["Origin"], !ownOrigins.contains(origin.lowercased()) {
            return Refusal(status: 403, reason: "the console answers its own pages only, not a page of another origin")
        }
        let navigation = kind == .page && head.headers["Sec-Fetch-Mode"] == "navigate" && head.headers["Sec-Fetch-Dest"] == "document"
        if let site = head.headers["Sec-Fetch-Site"], site != "same-origin", site != "none", !navigation {
            return Refusal(status: 403, reason: "the console answers its own pages only (the browser says this request came from a \(site == "same-site" ? "same-site" : "cross-site") page)")
        }
        guard kind == .call else { return nil }
        let keys = head.headers.values(Self.keyHeader)
        guard !keys.isEmpty else {
            return Refusal(status: 403, reason: "the console's API answers the console's page holding its key (\(Self.keyHeader)): open the URL ck printed, which ends in #key=…")
        }
        // One key, once: a second header is not a second chance.
        guard keys.count == 1, secret.matches(keys[0]) else {
            return Refusal(status: 403, reason: "this console key is not the server's: ck makes a new one each time it starts; open the URL it printed last")
        }
        return nil
    }

    /// What every console answer carries: not to be framed, cached, sniffed or referred from,
    /// and scripts, styles and connections from this origin only.
    static func secure(_ r: inout HTTPResponse) {
        r.headers.set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; media-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
        r.headers.set("X-Frame-Options", "DENY")
        r.headers.set("Referrer-Policy", "no-referrer")
        r.headers.set("X-Content-Type-Options", "nosniff")
        r.headers.set("Cache-Control", "no-store")
        r.headers.set("Cross-Origin-Resource-Policy", "same-origin")
        r.headers.set("Cross-Origin-Opener-Policy", "same-origin")
    }
}
