import CKCore
import Foundation

/// ck serve's sign-in page: the `redirectURL` of AUTHENTICATION_REQUIRED, standing in for
/// Apple's sign-in popup. In a browser it lists the users who signed in on this device's data
/// directory, signs one in and ends as Apple's popup ends, with
/// `window.opener.postMessage({ckSession: TOKEN}, "*")`. Asked with `Accept: application/json`
/// it answers `{"ckSession": TOKEN}` for the device's signed-in account, or for `?appleID=`;
/// scripts and Node clients sign in that way. `keepSignedIn=true` makes a two-week session.
struct SignInPage {
    let api: CloudKitAPI
    let container: String
    let environment: Environment

    static func url(api: CloudKitAPI, container: String, environment: Environment) -> String {
        (api.serverURL ?? "") + "/signin/" + percentEncoded(container) + "/" + environment.rawValue
    }

    func respond(to request: HTTPRequest) throws -> HTTPResponse {
        let head = request.head
        try Names.validateContainerID(container)
        if head.method == "POST" {
            // Only this page's own form signs a user in: a page of another site posting to it
            // (its browser says so in Origin) would get the session handed to its window.
            let own = [api.serverURL, api.serverURL?.replacingOccurrences(of: "//127.0.0.1:", with: "//localhost:")].compactMap { $0 }
            if let origin = head.headers["Origin"], !own.contains(origin) {
                return html(403, page(error: "Sign-in was posted from \(origin), not from this page."))
            }
            let form = QueryString(String(decoding: request.body.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self))
            let typed = form["newAppleID"].map(trimmed) ?? ""
            guard let appleID = typed.isEmpty ? form["appleID"].map(trimmed) : typed, !appleID.isEmpty else {
                return html(400, page(error: "Choose a user, or type an Apple ID."))
            }
            do {
                // A new Apple ID becomes a user of the data directory; the device stays signed in as it is.
                if !typed.isEmpty { _ = try api.addWebUser(appleID: typed) }
                let token = try session(appleID: appleID, keepSignedIn: form["keepSignedIn"] != nil)
                return html(200, signedIn(token))
            } catch let e as CloudKitError {
                return html(e.code == .authenticationRequired ? 403 : 400, page(error: e.reason))
            }
        }
        let query = QueryString(head.query ?? "")
        if (head.headers["Accept"] ?? "").contains("application/json") {
            let token = try session(appleID: query["appleID"], keepSignedIn: query["keepSignedIn"] == "true")
            var h = HTTPHeaders([("Content-Type", "application/json; charset=utf-8")])
            h.add("Cache-Control", "no-store")
            return HTTPResponse(status: 200, headers: h, body: Array(JSONWriter.compact(["ckSession": .string(token)]).utf8))
        }
        return html(200, page(error: nil))
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

    private func page(error: String?) -> String {
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

    /// What Apple's popup does once the user signed in: hands the session to the page that
    /// opened it and closes.
    private func signedIn(_ token: String) -> String {
        // JSON is a JavaScript literal; `<` escaped so no `</script>` can end the script early.
        let literal = JSONWriter.compact(["ckSession": .string(token)]).replacingOccurrences(of: "<", with: "\\u003c")
        return """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Signed in — ck serve</title></head>
        <body><p>Signed in. You can close this window.</p>
        <script>
        if (window.opener) { window.opener.postMessage(\(literal), "*"); window.close(); }
        </script></body></html>
        """
    }

    private func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// RFC 3986's unreserved characters: what a path segment may hold as it is.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func percentEncoded(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s }
}
