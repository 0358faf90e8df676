import CKCore
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// The sign-in of an API token made with a sign-in callback (the CloudKit Console's "URL
/// Redirect"), as a command-line client drives it: the 421 names the token's sign-in page, and
/// signing in there answers 302 to the token's stored callback with `?ckWebAuthToken=…&ckSession=…`.
final class SignInCallbackTests: XCTestCase {
    static let callback = "http://127.0.0.1:53821/callback"

    func object(_ a: HTTPTestClient.Answer) -> [String: Any] { (a.json as? [String: Any]) ?? [:] }

    func token(_ f: ServeFixture, callback: String? = SignInCallbackTests.callback, environment: Environment = .development) throws -> String {
        try XCTUnwrapString(f.api.createAPIToken(name: "cli", signInCallback: callback, container: ServeFixture.container, environment: environment).document["apiToken"])
    }

    func form(_ f: ServeFixture, _ path: String, _ body: String, origin: String? = nil) throws -> HTTPTestClient.Answer {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let o = origin { headers.append(("Origin", o)) }
        return try f.client().request("POST", path, body: Array(body.utf8), headers: headers)
    }

    /// The 421's redirectURL for a request that carries `apiToken` and no session.
    func redirectURL(_ f: ServeFixture, _ apiToken: String, origin: String? = nil) throws -> String {
        let a = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/public/users/caller?ckAPIToken=\(apiToken)",
                                       headers: origin.map { [("Origin", $0)] } ?? [])
        XCTAssertEqual(a.status, 421, a.text)
        XCTAssertEqual(object(a)["serverErrorCode"] as? String, "AUTHENTICATION_REQUIRED")
        return try XCTUnwrap(object(a)["redirectURL"] as? String)
    }

    /// The query of a Location as a client reads it.
    func query(_ location: String) throws -> [String: String] {
        let q = try XCTUnwrap(location.split(separator: "?", maxSplits: 1).last)
        var out: [String: String] = [:]
        for pair in q.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            out[kv[0]] = kv.count > 1 ? kv[1].removingPercentEncoding : ""
        }
        return out
    }

    func sessions(_ f: ServeFixture) throws -> [[String: Any]] {
        let listed = try f.api.listWebSessions(as: Caller(container: ServeFixture.container)).document["sessions"]?.arrayValue ?? []
        return listed.map { s in ["keepSignedIn": s["keepSignedIn"]?.boolValue as Any, "id": s["id"]?.stringValue as Any] }
    }

    func testTheRedirectURLLeadsToASignInThatRedirectsToTheCallbackWithBothKeys() throws {
        let f = try ServeFixture(allowedOrigins: ["http://localhost:3000"])
        let cli = try token(f)
        let page = "/signin/\(ServeFixture.container)/development?ckAPIToken=\(cli)"
        XCTAssertEqual(try redirectURL(f, cli), f.url + page)
        XCTAssertEqual(try redirectURL(f, cli, origin: "http://localhost:3000"), f.url + page, "the token's callback, not postMessage, even from a page")

        let shown = try f.client().request("GET", page)
        XCTAssertEqual(shown.status, 200, shown.text)
        XCTAssertTrue(shown.text.contains("<code>\(Self.callback)</code>"), "the user sees where the session goes: \(shown.text)")
        XCTAssertTrue(shown.text.contains("name=\"appleID\" value=\"alice@example.com\""), shown.text)

        // The form's POST, as curl sends it (no Origin): 302 to the callback.
        let before = try sessions(f).count
        let signedIn = try form(f, page, "appleID=alice%40example.com&keepSignedIn=true")
        XCTAssertEqual(signedIn.status, 302, signedIn.text)
        XCTAssertEqual(signedIn.header("Cache-Control"), "no-store")
        let location = try XCTUnwrap(signedIn.header("Location"))
        XCTAssertTrue(location.hasPrefix(Self.callback + "?ckWebAuthToken="), location)
        let keys = try query(location)
        let session = try XCTUnwrap(keys["ckWebAuthToken"])
        XCTAssertEqual(keys["ckSession"], session, "both keys, as Apple's sign-in sets them")
        XCTAssertEqual(Set(keys.keys), ["ckWebAuthToken", "ckSession"])
        let made = try sessions(f)
        XCTAssertEqual(made.count, before + 1, "one session made")
        XCTAssertEqual(made.last?["keepSignedIn"] as? Bool, true, "keepSignedIn as the form said")

        // The session works as ckWebAuthToken with the token.
        let me = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/public/users/caller?ckAPIToken=\(cli)&ckWebAuthToken="
                                        + SignInPage.percentEncoded(session))
        XCTAssertEqual(me.status, 200, me.text)
        XCTAssertNotNil(object(me)["userRecordName"] as? String, me.text)

        // From the page itself (a browser's own-origin POST), without keepSignedIn: a 30-minute session.
        let own = try form(f, page, "appleID=alice%40example.com", origin: f.url)
        XCTAssertEqual(own.status, 302, own.text)
        XCTAssertEqual(try sessions(f).last?["keepSignedIn"] as? Bool, false)
        // And the JSON sign-in is today's, callback or not.
        let json = try f.client().request("GET", page, headers: [("Accept", "application/json")])
        XCTAssertEqual(json.status, 200, json.text)
        XCTAssertNotNil(object(json)["ckSession"] as? String, json.text)
        XCTAssertNil(json.header("Location"))
    }

    func testACallbackWithAQueryKeepsItAndGetsTheKeysAfterIt() throws {
        let f = try ServeFixture()
        for (callback, prefix) in [("https://app.example/cb?state=xyz", "https://app.example/cb?state=xyz&ckWebAuthToken="),
                                   ("http://127.0.0.1:8080/done?", "http://127.0.0.1:8080/done?ckWebAuthToken="),
                                   ("http://[::1]:9000/?a=1&", "http://[::1]:9000/?a=1&ckWebAuthToken=")] {
            let t = try token(f, callback: callback)
            let done = try form(f, "/signin/\(ServeFixture.container)/development?ckAPIToken=\(t)", "appleID=alice%40example.com")
            XCTAssertEqual(done.status, 302, done.text)
            let location = try XCTUnwrap(done.header("Location"))
            XCTAssertTrue(location.hasPrefix(prefix), location)
            XCTAssertTrue(location.contains("&ckSession="), location)
        }
    }

    /// A token is put in the query percent-encoded: ck's own are base64url, but a client must
    /// read back Apple's, whose `+`, `/` and `=` a form decoder would turn into something else.
    func testATokenIsPercentEncodedInTheLocation() throws {
        XCTAssertEqual(SignInPage.callbackLocation("http://127.0.0.1:1/cb", session: "158__54__a+b/c=="),
                       "http://127.0.0.1:1/cb?ckWebAuthToken=158__54__a%2Bb%2Fc%3D%3D&ckSession=158__54__a%2Bb%2Fc%3D%3D")
        XCTAssertEqual(SignInPage.callbackLocation("http://h/cb?x=1", session: "a b&c"), "http://h/cb?x=1&ckWebAuthToken=a%20b%26c&ckSession=a%20b%26c")
        let location = SignInPage.callbackLocation("http://h/cb", session: "+/=")
        XCTAssertEqual(try query(location)["ckSession"], "+/=")
    }

    /// The callback is the stored one: a page that adds its own to the URL gets the session
    /// sent to the token's callback (or, for a token without one, nowhere); a token the
    /// container and environment do not have is refused and makes no session.
    func testACallbackInTheQueryIsIgnoredAndAnUnknownTokenIsRefused() throws {
        let f = try ServeFixture()
        let cli = try token(f)
        let evil = "https%3A%2F%2Fevil.example%2F"
        let forged = try form(f, "/signin/\(ServeFixture.container)/development?callback=\(evil)&ckAPIToken=\(cli)&signInCallback=\(evil)&redirect_uri=\(evil)",
                              "appleID=alice%40example.com&callback=\(evil)")
        XCTAssertEqual(forged.status, 302, forged.text)
        XCTAssertTrue(try XCTUnwrap(forged.header("Location")).hasPrefix(Self.callback + "?"), forged.header("Location") ?? "")
        XCTAssertFalse(forged.text.contains("evil.example"), forged.text)

        let before = try sessions(f).count
        // The fixture's token has no callback: a callback in the query sends nothing anywhere.
        let noCallback = try form(f, "/signin/\(ServeFixture.container)/development?ckAPIToken=\(f.apiToken)&callback=\(evil)", "appleID=alice%40example.com")
        XCTAssertEqual(noCallback.status, 200, noCallback.text)
        XCTAssertNil(noCallback.header("Location"))
        XCTAssertTrue(noCallback.text.contains("no session was made"), noCallback.text)
        // Not a token of this container and environment: 401, nothing made.
        let production = try token(f, environment: .production)
        for t in [String(repeating: "0", count: 64), production, "nope"] {
            let refused = try form(f, "/signin/\(ServeFixture.container)/development?ckAPIToken=\(t)", "appleID=alice%40example.com")
            XCTAssertEqual(refused.status, 401, refused.text)
            XCTAssertEqual(object(refused)["serverErrorCode"] as? String, "AUTHENTICATION_FAILED", refused.text)
            XCTAssertNil(refused.header("Location"))
            XCTAssertEqual(try f.client().request("GET", "/signin/\(ServeFixture.container)/development?ckAPIToken=\(t)").status, 401)
        }
        XCTAssertEqual(try sessions(f).count, before, "no session made")
    }

    /// A page of another site that submits the form into a window (cross-site request
    /// forgery) is refused, as for the post-message page; so is a signed-out device.
    func testACrossSitePostIsRefusedAndMakesNoSession() throws {
        let f = try ServeFixture()
        let page = "/signin/\(ServeFixture.container)/development?ckAPIToken=\(try token(f))"
        let before = try sessions(f).count
        let posted = try f.client().request("POST", page, body: Array("appleID=alice%40example.com&keepSignedIn=true".utf8),
                                            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "https://evil.example"),
                                                      ("Sec-Fetch-Site", "cross-site")])
        XCTAssertEqual(posted.status, 403, posted.text)
        XCTAssertNil(posted.header("Location"))
        XCTAssertEqual(try sessions(f).count, before)

        _ = try f.api.signOut(as: Caller(container: ServeFixture.container))
        let signedOut = try form(f, page, "appleID=alice%40example.com")
        XCTAssertEqual(signedOut.status, 403, signedOut.text)
        XCTAssertNil(signedOut.header("Location"))
    }

    /// A token without a callback keeps the post-message page: its 421 names no token, and
    /// naming it in the page's URL changes nothing.
    func testATokenWithoutACallbackKeepsThePostMessagePage() throws {
        let f = try ServeFixture(allowedOrigins: ["http://localhost:3000"])
        XCTAssertEqual(try redirectURL(f, f.apiToken), f.url + "/signin/\(ServeFixture.container)/development")
        XCTAssertEqual(try redirectURL(f, f.apiToken, origin: "http://localhost:3000"),
                       f.url + "/signin/\(ServeFixture.container)/development?origin=http%3A%2F%2Flocalhost%3A3000")
        let posted = try form(f, "/signin/\(ServeFixture.container)/development?origin=http%3A%2F%2Flocalhost%3A3000&ckAPIToken=\(f.apiToken)",
                              "appleID=alice%40example.com")
        XCTAssertEqual(posted.status, 200, posted.text)
        XCTAssertNil(posted.header("Location"))
        XCTAssertTrue(posted.text.contains(#"window.opener.postMessage({"ckSession":"#), posted.text)
    }
}
