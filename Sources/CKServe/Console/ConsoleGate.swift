import CKHTTP

/// Who may reach the console: a browser tab of this server's own origin holding the secret.
/// Every request under `/console` passes here before its body is read, and is refused unless
///
/// - its `Host` is one of the server's own names (DNS rebinding: a page of another site whose
///   name resolves to 127.0.0.1 sends its own name);
/// - an `Origin` it carries is the server's own, and a `Sec-Fetch-Site` it carries says
///   `same-origin` or `none` (a typed URL or a bookmark): a page of another origin can neither
///   send it requests that act (CSRF) nor read its answers (no CORS headers are ever given);
/// - it holds the secret: as `?token=` on the console's URL, which is answered with the
///   cookie and a redirect to the bare URL (so the token leaves the address bar, the history
///   and any `Referer`), or as that cookie — `HttpOnly` (no script reads it) and
///   `SameSite=Strict` (no other site's page sends it);
/// - a request of the console's API or its Web Services carries `X-CK-Console: 1`, a header
///   a form cannot send and a page of another origin cannot send without a preflight, which
///   is refused.
struct ConsoleGate: Sendable {
    let secret: ConsoleSecret
    /// The origins of the console's own pages: `http://NAME:PORT` for each name of the server.
    let ownOrigins: Set<String>
    /// Cookies are kept per host, not per port: two servers on one machine each have their own.
    let cookieName: String

    init(secret: ConsoleSecret, hostNames: Set<String>, port: UInt16) {
        self.secret = secret
        ownOrigins = Set(hostNames.map { "http://" + ($0.contains(":") ? "[\($0)]" : $0) + ":\(port)" })
        cookieName = "ck-console-\(port)"
    }

    /// How a request came to the console.
    enum Pass: Equatable {
        /// With the secret in the URL: answered with the cookie and a redirect.
        case token
        /// With the cookie.
        case cookie
    }

    /// Why a request is refused, for the page and the log (never the secret).
    struct Refusal: Error {
        let status: Int
        let reason: String
    }

    /// The checks of the head; what passed, or the refusal.
    func check(_ head: HTTPRequestHead, needsConsoleHeader: Bool) -> Result<Pass, Refusal> {
        guard head.headers["Host"] != nil else {
            return .failure(Refusal(status: 400, reason: "the console answers requests that name its host (Host)"))
        }
        if let origin = head.headers["Origin"], !ownOrigins.contains(origin.lowercased()) {
            return .failure(Refusal(status: 403, reason: "the console answers its own pages only, not a page of another origin"))
        }
        if let site = head.headers["Sec-Fetch-Site"], site != "same-origin", site != "none" {
            return .failure(Refusal(status: 403, reason: "the console answers its own pages only (the browser says this request came from a \(site == "same-site" ? "same-site" : "cross-site") page)"))
        }
        let pass: Pass
        if let token = QueryString(head.query ?? "")["token"] {
            guard secret.matches(token) else {
                return .failure(Refusal(status: 403, reason: "this console link's token is not the server's: ck makes a new one each time it starts; open the URL it printed last"))
            }
            pass = .token
        } else if cookies(head).contains(where: secret.matches) {
            pass = .cookie
        } else {
            return .failure(Refusal(status: 403, reason: "the console needs the link ck serve printed (its token is the key): open that URL in this browser"))
        }
        if needsConsoleHeader && head.headers["X-CK-Console"] != "1" {
            return .failure(Refusal(status: 403, reason: "the console's API is called by the console's own script (X-CK-Console: 1)"))
        }
        return .success(pass)
    }

    /// The values of this server's console cookie in the `Cookie` headers: every one, since a
    /// page of another local port can set one of the same name (cookies are per host) — a
    /// planted one must not hide the real one.
    func cookies(_ head: HTTPRequestHead) -> [String] {
        var out: [String] = []
        for header in head.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let p = pair.drop { $0 == " " }
                guard let eq = p.firstIndex(of: "="), p[..<eq] == cookieName[...] else { continue }
                out.append(String(p[p.index(after: eq)...]))
            }
        }
        return out
    }

    /// The cookie that keeps the secret: for the console's paths only, out of scripts' reach,
    /// sent by no other site's page, gone when the browser closes.
    var setCookie: String { "\(cookieName)=\(secret.value); Path=/console; HttpOnly; SameSite=Strict" }

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
