import CKCore
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// What a credential of ck serve is worth over HTTP (issue 35): a downloadURL is a capability
/// signed for its reader; the sign-in page posts a session only to the allowed page that asked
/// for it; a refused web auth token says what is wrong with it.
final class ServeCapabilityTests: XCTestCase {
    func object(_ a: HTTPTestClient.Answer) -> [String: Any] { (a.json as? [String: Any]) ?? [:] }

    func form(_ f: ServeFixture, _ path: String, _ body: String, origin: String? = nil) throws -> HTTPTestClient.Answer {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let o = origin { headers.append(("Origin", o)) }
        return try f.client().request("POST", path, body: Array(body.utf8), headers: headers)
    }

    func sessionFiles(_ f: ServeFixture) -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: f.root + "/web-sessions")) ?? []).filter { $0.hasSuffix(".json") }.count }

    // MARK: item 2: downloadURLs are capabilities

    func testADownloadURLServesItsReaderAndNothingElseGetsMoreThanOne404() throws {
        let f = try ServeFixture()
        let urls = try f.post("private", "assets/upload", #"{"tokens":[{"fieldName":"pin","recordName":"safe"}]}"#)
        let upload = try XCTUnwrap((object(urls)["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let bytes = Array("4711".utf8)
        let up = try f.client().request("POST", String(upload.dropFirst(f.url.count)), body: bytes)
        let single = String(decoding: try JSONSerialization.data(withJSONObject: try XCTUnwrap(object(up)["singleFile"])), as: UTF8.self)
        let saved = try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Safe","recordName":"safe","fields":{"pin":{"value":\#(single)}}}}]}"#)
        XCTAssertEqual(saved.status, 200, saved.text)
        let value = (((object(saved)["records"] as? [[String: Any]])?.first?["fields"] as? [String: Any])?["pin"] as? [String: Any])?["value"] as? [String: Any]
        let download = try XCTUnwrap(value?["downloadURL"] as? String, saved.text)
        let signed = String(download.dropFirst(f.url.count))
        XCTAssertTrue(signed.hasPrefix("/assets/") && signed.contains("?e="), signed)

        let got = try f.client().request("GET", signed)
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.body, bytes)
        let maxAge = Int(got.header("Cache-Control")?.split(separator: "=").last ?? "") ?? 0
        XCTAssertTrue((1...31 * 60).contains(maxAge), "cached no longer than the URL lives: \(got.header("Cache-Control") ?? "")")
        XCTAssertFalse(f.log.lines.contains { $0.contains(String(signed.split(separator: "/").last!.prefix(20))) }, "the log does not show it")

        // The hash alone, a forged signature, an asset that is not there: one 404, one body.
        let path = String(signed.prefix { $0 != "?" })
        var forged = Array(signed)
        forged[forged.count - 2] = forged[forged.count - 2] == "A" ? "B" : "A"
        let missing = "/assets/00/" + String(repeating: "0", count: 64)
        var bodies = Set<String>()
        for target in [path, String(forged), missing, missing + String(signed.drop { $0 != "?" })] {
            let a = try f.client().request("GET", target)
            XCTAssertEqual(a.status, 404, target)
            XCTAssertEqual(object(a)["serverErrorCode"] as? String, "NOT_FOUND")
            XCTAssertNil(a.header("Cache-Control"))
            var o = object(a)
            o["uuid"] = nil
            bodies.insert(String(decoding: try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]), as: UTF8.self))
        }
        XCTAssertEqual(bodies.count, 1, "nothing tells a stored asset from a missing one: \(bodies)")
    }

    // MARK: item 3: the sign-in page posts only to the allowed page that asked

    func testTheSignInPagePostsTheSessionOnlyToTheAllowedOriginThatAsked() throws {
        let f = try ServeFixture(allowedOrigins: ["http://localhost:3000"])
        // The 421 names the asking page's origin when it is allowed, and no other.
        func redirect(_ origin: String?) throws -> String {
            let a = try f.client().request("GET", f.path("public", "users/caller", signedIn: false), headers: origin.map { [("Origin", $0)] } ?? [])
            XCTAssertEqual(a.status, 421)
            return String(try XCTUnwrap(object(a)["redirectURL"] as? String).dropFirst(f.url.count))
        }
        let allowed = try redirect("http://localhost:3000")
        XCTAssertEqual(allowed, "/signin/\(ServeFixture.container)/development?origin=http%3A%2F%2Flocalhost%3A3000")
        XCTAssertEqual(try redirect("https://evil.example"), "/signin/\(ServeFixture.container)/development", "a foreign page's origin is not named")
        XCTAssertEqual(try redirect(nil), "/signin/\(ServeFixture.container)/development")

        // Signed in from the allowed page: the session goes to that origin as postMessage's target, never to "*".
        let ok = try form(f, allowed, "appleID=alice%40example.com")
        XCTAssertEqual(ok.status, 200, ok.text)
        XCTAssertTrue(ok.text.contains(#"window.opener.postMessage({"ckSession":"#), ok.text)
        XCTAssertTrue(ok.text.contains(#"}, "http://localhost:3000");"#), ok.text)
        XCTAssertFalse(ok.text.contains(#""*""#), ok.text)

        // A page that names an origin it is not, or one not allowed, or none: no token in the answer, and no session made.
        let before = sessionFiles(f)
        for path in ["/signin/\(ServeFixture.container)/development?origin=https%3A%2F%2Fevil.example",
                     "/signin/\(ServeFixture.container)/development?origin=http%3A%2F%2Flocalhost%3A3000%2Fpath",
                     "/signin/\(ServeFixture.container)/development?origin=javascript%3Aalert(1)",
                     "/signin/\(ServeFixture.container)/development"] {
            let page = try f.client().request("GET", path)
            XCTAssertTrue(page.text.contains("no session will be handed over"), page.text)
            let done = try form(f, path, "appleID=alice%40example.com")
            XCTAssertEqual(done.status, 200, done.text)
            XCTAssertFalse(done.text.contains("ckSession") || done.text.contains("postMessage"), done.text)
            XCTAssertTrue(done.text.contains("no session was made"), done.text)
        }
        XCTAssertEqual(sessionFiles(f), before, "no session made for nobody to receive")
        // Even then, a signed-out device is refused, as the real sign-in would be.
        _ = try f.api.signOut(as: Caller(container: ServeFixture.container))
        XCTAssertEqual(try form(f, "/signin/\(ServeFixture.container)/development", "appleID=alice%40example.com").status, 403)
    }

    /// The page's HTML escapes the origin it names, and the script's target is a JSON string.
    func testTheNamedOriginIsEscapedInThePage() throws {
        let f = try ServeFixture(allowedOrigins: ["*"])
        let page = try f.client().request("GET", "/signin/\(ServeFixture.container)/development?origin=http%3A%2F%2Fa.example%3C%2Fscript%3E")
        XCTAssertFalse(page.text.contains("a.example</script>"), "not an origin's shape: not named at all")
        XCTAssertTrue(page.text.contains("no session will be handed over"))
        let done = try form(f, "/signin/\(ServeFixture.container)/development?origin=https%3A%2F%2Fapp.example%3A8443", "appleID=alice%40example.com")
        XCTAssertTrue(done.text.contains(#"}, "https://app.example:8443");"#), done.text)
    }

    // MARK: item 17: a refused ckWebAuthToken says what is wrong with it

    func testA421SaysWhatIsWrongWithTheTokenNotThatTheDeviceIsSignedOut() throws {
        let f = try ServeFixture()
        func refused(_ web: String) throws -> String {
            let a = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/private/zones/list?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(web)")
            XCTAssertEqual(a.status, 421, a.text)
            XCTAssertEqual(object(a)["serverErrorCode"] as? String, "AUTHENTICATION_REQUIRED")
            XCTAssertNotNil(object(a)["redirectURL"] as? String)
            let reason = object(a)["reason"] as? String ?? ""
            XCTAssertFalse(reason.contains("no iCloud account is signed in"), reason)
            XCTAssertFalse(reason.contains(f.session.prefix(12)), "the token is not echoed: \(reason)")
            return reason
        }
        XCTAssertTrue(try refused(f.session + "%0A").contains("ends in a newline (%0A)"))
        XCTAssertTrue(try refused(f.session + "%20").contains("ends in a space (%20)"))
        XCTAssertTrue(try refused(String(f.session.dropLast())).contains("is 42 characters"))
        XCTAssertTrue(try refused(String(repeating: "A", count: 43)).contains("names no session"))
        let none = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/private/zones/list?ckAPIToken=\(f.apiToken)")
        XCTAssertTrue((object(none)["reason"] as? String ?? "").contains("carries no ckWebAuthToken"), none.text)
        // An API token with its newline: 401, naming the length it has and needs.
        let api = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/public/zones/list?ckAPIToken=\(f.apiToken)%0A")
        XCTAssertEqual(api.status, 401)
        XCTAssertTrue((object(api)["reason"] as? String ?? "").contains("is 65 characters, not 64: it ends in a newline"), api.text)
    }
}
