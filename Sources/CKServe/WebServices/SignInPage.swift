import CKCore
import CKHTTP
import CKJSON
import CKModel
import Foundation

/// ck serve's sign-in page: the `redirectURL` of AUTHENTICATION_REQUIRED, standing in for
/// Apple's sign-in popup. In a browser it lists the users who signed in on this device's data
/// directory, signs one in and ends as Apple's popup ends, posting `{ckSession: TOKEN}` to the
/// page that opened it — to that page's origin only, and only when `--allow-origin` allows
/// it. Asked with `Accept: application/json` it answers `{"ckSession": TOKEN}` for the device's
/// signed-in account, or for `?appleID=`; scripts and Node clients sign in that way.
/// `keepSignedIn=true` makes a two-week session.
///
/// The opener's origin comes from the request that was refused: its `Origin` (a browser sets it,
/// and a page cannot) goes into the `redirectURL` as `?origin=`. Anyone can open the page with
/// any `origin`, so the query is not trusted for more than it can do: the session is posted with
/// that origin as `postMessage`'s target, which a browser delivers only to a window of that
/// origin — a page of another site that opened the popup receives nothing.
///
/// An API token made with a sign-in callback (the Console's "URL Redirect") ends the sign-in
/// the other way: the 421 of a request carrying it names the token (`?ckAPIToken=`), and
/// signing in answers 302 to the callback with `?ckWebAuthToken=…&ckSession=…`. The callback
/// is the one stored with the token: the query names only the token, and a token a hostile
/// page names sends the session to that token's own callback, never to the page.
struct SignInPage {
    let api: CloudKitAPI
    let container: String
    let environment: Environment
    let origins: AllowedOrigins

    /// Where a sign-in's session goes.
    private enum Destination {
        /// The sign-in callback of the API token the page's URL names (URL Redirect).
        case callback(String)
        /// The allowed page that opened the popup (Post Message).
        case opener(String)
        /// Nobody: no session is made.
        case nobody
    }

    /// The page's URL: naming the API token whose sign-in callback the session goes to
    /// (`redirecting`), or else the origin of the page that will open it when that is an
    /// allowed one.
    static func url(api: CloudKitAPI, container: String, environment: Environment, opener: String? = nil, redirecting apiToken: String? = nil) -> String {
        let page = (api.serverURL ?? "") + "/signin/" + percentEncoded(container) + "/" + environment.rawValue
        if let apiToken { return page + "?ckAPIToken=" + percentEncoded(apiToken) }
        return opener.map { page + "?origin=" + percentEncoded($0) } ?? page
    }

    /// The callback with the session appended to its query under both names Apple's sign-in
    /// sets, percent-encoded: a `+`, `/` or `=` of a token would otherwise reach the client as
    /// something else (a form decoder reads `+` as a space).
    static func callbackLocation(_ callback: String, session: String) -> String {
        let t = percentEncoded(session)
        let joint = !callback.contains("?") ? "?" : callback.hasSuffix("?") || callback.hasSuffix("&") ? "" : "&"
        return callback + joint + "ckWebAuthToken=" + t + "&ckSession=" + t
    }

    /// Where this page's sign-in sends the session: the callback of the API token its URL
    /// names, when that token has one (looked up, never taken from the query); else the opener.
    /// An unknown token is refused (AUTHENTICATION_FAILED), as a request carrying it would be.
    private func destination(_ head: HTTPRequestHead) throws -> Destination {
        if let token = QueryString(head.query ?? "")["ckAPIToken"],
           let callback = try api.signInCallback(ofAPIToken: token, container: container, environment: environment) {
            return .callback(callback)
        }
        return opener(head).map { .opener($0) } ?? .nobody
    }

    /// The origin the page may post a session to: the one its URL names, when it is shaped as
    /// a web origin and allowed.
    private func opener(_ head: HTTPRequestHead) -> String? {
        guard let o = QueryString(head.query ?? "")["origin"], AllowedOrigins.isOrigin(o), origins.allows(o) else { return nil }
        return o
    }

    func respond(to request: HTTPRequest) throws -> HTTPResponse {
        let head = request.head
        try Names.validateContainerID(container)
        if head.method == "POST" {
            // Only this page's own form signs a user in: a page of another site posting to it
            // (its browser says so in Origin) would get the session handed to its window.
            if let origin = head.headers["Origin"], !origins.own.contains(origin) {
                return html(403, page(error: "Sign-in was posted from \(origin), not from this page.", to: .nobody))
            }
            let to = try destination(head)
            let form = QueryString(String(decoding: request.body.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self))
            let typed = form["newAppleID"].map(trimmed) ?? ""
            guard let appleID = typed.isEmpty ? form["appleID"].map(trimmed) : typed, !appleID.isEmpty else {
                return html(400, page(error: "Choose a user, or type an Apple ID.", to: to))
            }
            do {
                // A new Apple ID becomes a user of the data directory; the device stays signed in as it is.
                if !typed.isEmpty { _ = try api.addWebUser(appleID: typed) }
                switch to {
                case .nobody:
                    // No page to hand a session to: none is made, and the answer holds no token.
                    try api.checkWebAuthToken(as: Caller(container: container, environment: environment, scope: .private, user: .appleID(appleID)))
                    return html(200, signedInWithoutOpener(appleID))
                case .opener(let target):
                    let token = try session(appleID: appleID, keepSignedIn: form["keepSignedIn"] != nil)
                    return html(200, signedIn(token, postTo: target))
                case .callback(let callback):
                    let token = try session(appleID: appleID, keepSignedIn: form["keepSignedIn"] != nil)
                    let location = Self.callbackLocation(callback, session: token)
                    var r = html(302, redirected(to: location))
                    r.headers.set("Location", location)
                    return r
                }
            } catch let e as CloudKitError {
                return html(e.code == .authenticationRequired ? 403 : 400, page(error: e.reason, to: to))
            }
        }
        let query = QueryString(head.query ?? "")
        if (head.headers["Accept"] ?? "").contains("application/json") {
            // A page of another site cannot read the answer (CORS), but a session would still be
            // made for every fetch it sends: none is.
            if let origin = head.headers["Origin"], !origins.allows(origin), !origins.own.contains(origin) {
                throw CloudKitError(.accessDenied, "a page of \(Names.describe(String(origin.prefix(200)))) asked for a session; only pages of an origin --allow-origin allows may sign in here")
            }
            let token = try session(appleID: query["appleID"], keepSignedIn: query["keepSignedIn"] == "true")
            var h = HTTPHeaders([("Content-Type", "application/json; charset=utf-8")])
            h.add("Cache-Control", "no-store")
            return HTTPResponse(status: 200, headers: h, body: Array(JSONWriter.compact(["ckSession": .string(token)]).utf8))
        }
        return html(200, page(error: nil, to: try destination(head)))
    }

    /// A web session for a user who signed in on this device (nil: the device's account).
    private func session(appleID: String?, keepSignedIn: Bool) throws -> String {
        let caller = Caller(container: container, environment: environment, scope: .private, user: appleID.map { .appleID($0) } ?? .device)
        guard let token = try api.createWebAuthToken(as: caller, keepSignedIn: keepSignedIn).document["ckWebAuthToken"]?.stringValue else {
            throw CloudKitError.internalError("no web auth token was made")
        }
        return token
    }

    private func trimmed(_ s: String) -> String { s.trimmingCharacters(in: .whitespaces) }

    // MARK: pages

    private func html(_ status: Int, _ text: String) -> HTTPResponse {
        var h = HTTPHeaders([("Content-Type", "text/html; charset=utf-8")])
        h.add("Cache-Control", "no-store")
        // The page may not be framed by another site (it signs users in with one click).
        h.add("X-Frame-Options", "DENY")
        h.add("Content-Security-Policy", "frame-ancestors 'none'")
        return HTTPResponse(status: status, headers: h, body: Array(text.utf8))
    }

    private func page(error: String?, to destination: Destination) -> String {
        let users = (try? api.webSignInUsers().document["users"]?.arrayValue) ?? []
        let choices = users.compactMap { u -> String? in
            guard let id = u["appleID"]?.stringValue else { return nil }
            let name = u["name"]?.stringValue.map { " (\(escape($0)))" } ?? ""
            return "<li><label><input type=\"radio\" name=\"appleID\" value=\"\(escape(id))\"> \(escape(id))\(name)</label></li>"
        }.joined(separator: "\n")
        return """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Sign in — ck serve</title>
        <style>body{font:15px system-ui,sans-serif;max-width:28em;margin:3em auto}li{list-style:none;margin:.4em 0}.error{color:#b00}</style></head>
        <body><h1>Sign in with Apple ID</h1>
        <p>ck serve, for \(escape(container)) (\(environment.rawValue)): choose a user who signed in on this device, or type another Apple ID.</p>
        <p>\(goesTo(destination))</p>
        \(error.map { "<p class=\"error\">\(escape($0))</p>" } ?? "")
        <form method="post">
        <ul>
        \(choices.isEmpty ? "<li>No user has signed in on this device yet: <code>ck account signin APPLE-ID</code>.</li>" : choices)
        </ul>
        <p><label>Or another Apple ID: <input type="email" name="newAppleID" placeholder="name@example.com"></label></p>
        <p><label><input type="checkbox" name="keepSignedIn" value="true"> Keep me signed in</label></p>
        <p><button type="submit">Sign In</button></p>
        </form></body></html>
        """
    }

    private func goesTo(_ destination: Destination) -> String {
        switch destination {
        case .callback(let url):
            return "Signing in sends this browser, with your session, to <code>\(escape(url))</code>: the sign-in callback of the app's API token."
        case .opener(let origin):
            return "The session goes to the page at <code>\(escape(origin))</code> that opened this window."
        case .nobody:
            return "No allowed web page opened this window (its origin is not one <code>--allow-origin</code> allows), so no session will be handed over."
        }
    }

    /// The body of the 302 to a sign-in callback, for a client that does not follow it.
    private func redirected(to location: String) -> String {
        """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Signed in — ck serve</title></head>
        <body><p>Signed in. Continue to <a href="\(escape(location))">the app</a>.</p></body></html>
        """
    }

    /// What Apple's popup does once the user signed in: hands the session to the page that
    /// opened it — only if that page is of `origin`: the browser drops a message whose target
    /// origin is not the receiving window's — and closes.
    private func signedIn(_ token: String, postTo origin: String) -> String {
        // JSON is a JavaScript literal; `<` escaped so no `</script>` can end the script early.
        func literal(_ v: JSONValue) -> String { JSONWriter.compact(v).replacingOccurrences(of: "<", with: "\\u003c") }
        return """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Signed in — ck serve</title></head>
        <body><p>Signed in. You can close this window.</p>
        <script>
        if (window.opener) { window.opener.postMessage(\(literal(["ckSession": .string(token)])), \(literal(.string(origin)))); window.close(); }
        </script></body></html>
        """
    }

    /// The end of a sign-in no allowed page asked for: the user is told, and no token is in it.
    private func signedInWithoutOpener(_ appleID: String) -> String {
        """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Signed in — ck serve</title></head>
        <body><p>\(escape(appleID)) can sign in, but no allowed web page opened this window, so no session was made or handed over.
        Open it from your app's page (an origin <code>ck serve --allow-origin</code> allows), or make a token with <code>ck account web-auth-token</code>.</p>
        </body></html>
        """
    }

    private func escape(_ s: String) -> String { HTMLText.escaped(s) }

    /// RFC 3986's unreserved characters: what a path segment may hold as it is.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func percentEncoded(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s }
}
