import CKCore
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// The console's gate, attacked from outside: a request without the secret, with a forged one,
/// from a page of another origin, through a foreign Host (DNS rebinding), as a preflight, as a
/// form post without the console's header; and the secret kept out of the log and the URL.
final class ConsoleGateTests: XCTestCase {
    var f: ServeFixture!
    var token: String!

    override func setUpWithError() throws {
        f = try ServeFixture()
        let url = try XCTUnwrap(f.server.consoleURL)
        XCTAssertTrue(url.hasPrefix(f.url + "/console/?token="), url)
        token = String(url.split(separator: "=").last!)
        XCTAssertEqual(token.count, 64)
    }

    var cookieName: String { "ck-console-\(f.port)" }
    var cookie: (String, String) { ("Cookie", "\(cookieName)=\(token!)") }
    let call = ("X-CK-Console", "1")
    var wsPath: String { "/console/ws/database/1/\(ServeFixture.container)/development/private/zones/list" }

    func testTheTokenIsExchangedForAStrictHttpOnlyCookieAndLeavesTheURL() throws {
        let r = try f.client().request("GET", "/console/?token=" + token)
        XCTAssertEqual(r.status, 303)
        XCTAssertEqual(r.header("Location"), "/console/")
        XCTAssertEqual(r.header("Set-Cookie"), "\(cookieName)=\(token!); Path=/console; HttpOnly; SameSite=Strict")
        XCTAssertEqual(r.header("Referrer-Policy"), "no-referrer")
        XCTAssertEqual(r.header("Cache-Control"), "no-store")
        let page = try f.client().request("GET", "/console/", headers: [cookie])
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("<script src=\"/console/console.js\">"), page.text)
        XCTAssertTrue(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
        XCTAssertEqual(page.header("X-Frame-Options"), "DENY")
        XCTAssertNil(page.header("Set-Cookie"), "the cookie is given once, for the token")
        for file in ["/console/console.js", "/console/console.css"] {
            let r = try f.client().request("GET", file, headers: [cookie])
            XCTAssertEqual(r.status, 200, file)
            XCTAssertFalse(r.body.isEmpty, file)
        }
    }

    func testWithoutTheSecretEveryConsolePathIsRefused() throws {
        let forged = String(repeating: "0", count: 64)
        let attempts: [(String, [(String, String)])] = [
            ("/console/", []), ("/console", []), ("/console/console.js", []), ("/console/api/overview", [call]), (wsPath, [call]),
            ("/console/?token=" + forged, []), ("/console/?token=" + token.dropLast(), []), ("/console/?token=", []),
            ("/console/api/overview", [call, ("Cookie", "\(cookieName)=\(forged)")]),
            // Another server's cookie (cookies are per host, not per port): not this one's.
            ("/console/api/overview", [call, ("Cookie", "ck-console-1=\(token!)")]),
            ("/console/api/overview?token=" + forged, [call, cookie]),
        ]
        for (path, headers) in attempts {
            let r = try f.client().request("GET", path, headers: headers)
            XCTAssertEqual(r.status, 403, path)
            XCTAssertNil(r.header("Set-Cookie"), path)
            XCTAssertFalse(r.text.contains("console.js"), path)
            XCTAssertNil(r.header("Access-Control-Allow-Origin"), path)
        }
        // A cookie of the same name planted by a page of another local port (cookies are per
        // host) neither lets a request in nor shuts the real one out.
        XCTAssertEqual(try f.client().request("GET", "/console/api/overview", headers: [call, ("Cookie", "\(cookieName)=\(forged); \(cookieName)=\(token!)")]).status, 200)
        XCTAssertEqual(try f.client().request("GET", "/console/api/overview", headers: [call, ("Cookie", "\(cookieName)=\(forged); other=\(token!)")]).status, 403)
        // A browser's address bar gets a page saying why.
        let page = try f.client().request("GET", "/console/", headers: [("Accept", "text/html,application/xhtml+xml")])
        XCTAssertEqual(page.status, 403)
        XCTAssertTrue(page.text.contains("The console refused this request"), page.text)
        // The API's refusal is CloudKit's envelope.
        let api = try f.client().request("GET", "/console/api/overview", headers: [call])
        XCTAssertEqual((api.json as? [String: Any])?["serverErrorCode"] as? String, "ACCESS_DENIED")
    }

    func testAPageOfAnotherOriginIsRefusedEvenWithTheCookie() throws {
        // http://localhost:3000 is an origin Web Services allows by default (CORS): not the console.
        for origin in ["http://evil.example", "http://localhost:3000", "null", "http://127.0.0.1:\(f.port).evil.example"] {
            for (method, path, body) in [("GET", "/console/", nil), ("GET", "/console/api/overview", nil), ("POST", wsPath, Array("{}".utf8))] as [(String, String, [UInt8]?)] {
                let r = try f.client().request(method, path, body: body, headers: [cookie, call, ("Origin", origin)])
                XCTAssertEqual(r.status, 403, "\(origin) \(path)")
                XCTAssertNil(r.header("Access-Control-Allow-Origin"), "\(origin) \(path)")
            }
        }
        for site in ["cross-site", "same-site"] {
            let r = try f.client().request("GET", "/console/api/overview", headers: [cookie, call, ("Sec-Fetch-Site", site)])
            XCTAssertEqual(r.status, 403, site)
        }
        // Its own page's requests pass: the origin named as the browser names it.
        for origin in ["http://127.0.0.1:\(f.port)", "http://localhost:\(f.port)"] {
            let r = try f.client().request("GET", "/console/api/overview", headers: [cookie, call, ("Origin", origin), ("Sec-Fetch-Site", "same-origin")])
            XCTAssertEqual(r.status, 200, origin)
        }
    }

    func testAForeignHostIsRefused() throws {
        // DNS rebinding: evil.example resolved to 127.0.0.1, so the browser sends its name.
        let c = try f.client()
        try c.send("GET /console/api/overview HTTP/1.1\r\nHost: evil.example:\(f.port)\r\nCookie: \(cookieName)=\(token!)\r\nX-CK-Console: 1\r\nOrigin: http://evil.example:\(f.port)\r\n\r\n")
        let r = try c.readAnswer()
        XCTAssertEqual(r.status, 400)
        XCTAssertNil(r.header("Access-Control-Allow-Origin"))
        XCTAssertFalse(r.text.contains("containers"), r.text)
        // And one that names no host at all (HTTP/1.0): the console needs it.
        let c2 = try f.client()
        try c2.send("GET /console/api/overview HTTP/1.0\r\nCookie: \(cookieName)=\(token!)\r\nX-CK-Console: 1\r\n\r\n")
        XCTAssertEqual(try c2.readAnswer().status, 400)
    }

    func testAPreflightIsRefusedSoNoOtherOriginCanCallTheConsole() throws {
        let r = try f.client().request("OPTIONS", wsPath, headers: [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "POST"),
                                                                     ("Access-Control-Request-Headers", "x-ck-console, content-type")])
        XCTAssertEqual(r.status, 403)
        XCTAssertNil(r.header("Access-Control-Allow-Origin"))
        XCTAssertNil(r.header("Access-Control-Allow-Headers"))
        // Web Services keep theirs.
        let ws = try f.client().request("OPTIONS", "/database/1/\(ServeFixture.container)/development/private/zones/list",
                                        headers: [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "POST")])
        XCTAssertEqual(ws.header("Access-Control-Allow-Origin"), "http://localhost:3000")
    }

    func testCallsNeedTheConsoleHeaderSoAFormCannotPostOne() throws {
        let form = try f.client().request("POST", "/console/ws/database/1/\(ServeFixture.container)/development/private/records/modify",
                                          body: Array("operations=x".utf8), headers: [cookie, ("Content-Type", "application/x-www-form-urlencoded")])
        XCTAssertEqual(form.status, 403)
        XCTAssertEqual(try f.client().request("GET", "/console/api/overview", headers: [cookie]).status, 403)
        XCTAssertEqual(try f.client().request("GET", "/console/api/overview", headers: [cookie, ("X-CK-Console", "yes")]).status, 403)
        XCTAssertEqual(try f.client().request("GET", "/console/api/overview", headers: [cookie, call]).status, 200)
    }

    func testTheSecretNeverReachesTheLog() throws {
        _ = try f.client().request("GET", "/console/?token=" + token)
        let forged = "f" + token.dropFirst()
        _ = try f.client().request("GET", "/console/?token=" + forged)
        _ = try f.client().request("GET", "/console/api/overview", headers: [cookie, call])
        _ = try f.client().request("GET", "/console/api/nothing", headers: [cookie, call])
        // The engine logs a request once it is answered: give the last line a moment.
        let deadline = Date().addingTimeInterval(2)
        while f.log.lines.count < 4 && Date() < deadline { usleep(10_000) }
        let log = f.log.lines.joined(separator: "\n")
        XCTAssertTrue(log.contains("/console/"), log)
        XCTAssertFalse(log.contains(token), log)
        XCTAssertFalse(log.contains(forged), log)
    }

    func testWebServicesThroughTheConsoleActAsTheDeviceOrAUserWhoSignedInHere() throws {
        _ = try f.api.signIn(SignInRequest(appleID: "bob@example.com"), as: Caller(container: ServeFixture.container))
        _ = try f.api.signIn(SignInRequest(appleID: "alice@example.com"), as: Caller(container: ServeFixture.container))
        let base = "/console/ws/database/1/\(ServeFixture.container)/development/private/"
        let made = try f.client().request("POST", base + "zones/modify", json: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#, headers: [cookie, call])
        XCTAssertEqual(made.status, 200, made.text)
        let saved = try f.client().request("POST", base + "records/modify", json: #"{"zoneID":{"zoneName":"Lists"},"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":{"n":{"value":1}}}}]}"#, headers: [cookie, call])
        XCTAssertEqual(saved.status, 200, saved.text)
        let caller = Caller(container: ServeFixture.container)
        let record = try f.api.lookupRecords(LookupRecordsRequest(json: ["zoneID": ["zoneName": "Lists"], "records": [["recordName": "a"]]]), as: caller).jsonValue
        XCTAssertEqual(record["records"]?.arrayValue?.first?["modified"]?["deviceID"]?.stringValue, "console")
        // Bob, who signed in on this device, sees his own private database: not Alice's zone.
        let bobs = try f.client().request("GET", base + "zones/list?as=bob%40example.com", headers: [cookie, call])
        XCTAssertEqual(bobs.status, 200, bobs.text)
        XCTAssertFalse(bobs.text.contains("Lists"), bobs.text)
        let hers = try f.client().request("GET", base + "zones/list", headers: [cookie, call])
        XCTAssertTrue(hers.text.contains("Lists"), hers.text)
        // Someone who never signed in here is nobody the console can act as.
        let stranger = try f.client().request("GET", base + "zones/list?as=mallory%40example.com", headers: [cookie, call])
        XCTAssertNotEqual(stranger.status, 200, stranger.text)
        XCTAssertFalse(stranger.text.contains("Lists"), stranger.text)
    }

    func testAQueryRefusedForWantOfAnIndexNamesItAndTheConsoleCanAddIt() throws {
        let base = "/console/ws/database/1/\(ServeFixture.container)/development/private/"
        _ = try f.client().request("POST", base + "records/modify", json: #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":{"n":{"value":1}}}}]}"#, headers: [cookie, call])
        let query = #"{"query":{"recordType":"T"}}"#
        let refused = try f.client().request("POST", base + "records/query", json: query, headers: [cookie, call])
        XCTAssertEqual(refused.status, 400, refused.text)
        XCTAssertEqual((refused.json as? [String: Any])?["serverErrorCode"] as? String, "BAD_REQUEST")
        XCTAssertEqual(refused.header("X-CK-Index-Needed"), "T ___recordID QUERYABLE")
        let add = try f.client().request("POST", "/console/api/schema/index", json: #"{"container":"\#(ServeFixture.container)","environment":"development","recordType":"T","fieldName":"___recordID","index":"QUERYABLE"}"#, headers: [cookie, call])
        XCTAssertEqual(add.status, 200, add.text)
        let answered = try f.client().request("POST", base + "records/query", json: query, headers: [cookie, call])
        XCTAssertEqual(answered.status, 200, answered.text)
        XCTAssertTrue(answered.text.contains("\"recordName\":\"a\""), answered.text)
    }

    func testTheOverviewListsContainersUsersAndTheDevice() throws {
        for c in ["iCloud.com.example.other", ServeFixture.container] {
            _ = try f.api.modifyZones(ZonesModifyRequest(json: ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Z"]]]]]),
                                      as: Caller(container: c))
        }
        let r = try f.client().request("GET", "/console/api/overview", headers: [cookie, call])
        XCTAssertEqual(r.status, 200, r.text)
        let o = try XCTUnwrap(r.json as? [String: Any])
        let containers = (o["containers"] as? [[String: Any]])?.compactMap { $0["containerIdentifier"] as? String }
        XCTAssertEqual(containers, ["iCloud.com.example.other", ServeFixture.container].sorted())
        XCTAssertEqual((o["device"] as? [String: Any])?["appleID"] as? String, "alice@example.com")
        XCTAssertEqual((o["users"] as? [[String: Any]])?.compactMap { $0["appleID"] as? String }, ["alice@example.com"])
    }
}
