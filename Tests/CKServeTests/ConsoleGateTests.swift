import CKCore
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// The console's gate, attacked from outside: a call without the key, with a forged one, with
/// the key in a cookie (which every local port is sent), from a page of another origin, through
/// a foreign Host (DNS rebinding), as a preflight, as a form post; and the key kept out of the
/// log and of every request line.
final class ConsoleGateTests: XCTestCase {
    var f: ServeFixture!
    var token: String!

    override func setUpWithError() throws {
        f = try ServeFixture()
        let url = try XCTUnwrap(f.server.consoleURL)
        XCTAssertTrue(url.hasPrefix(f.url + "/console/#key="), url)
        token = String(url.split(separator: "=").last!)
        XCTAssertEqual(token.count, 64)
    }

    var call: (String, String) { ("X-CK-Console", token) }
    var wsPath: String { "/console/ws/database/1/\(ServeFixture.container)/development/private/zones/list" }

    func testThePageNeedsNoKeyAndHoldsNoData() throws {
        let page = try f.client().request("GET", "/console/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("<script src=\"/console/console.js\">"), page.text)
        XCTAssertTrue(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
        XCTAssertEqual(page.header("X-Frame-Options"), "DENY")
        XCTAssertEqual(page.header("Referrer-Policy"), "no-referrer")
        XCTAssertEqual(page.header("Cache-Control"), "no-store")
        XCTAssertNil(page.header("Set-Cookie"), "no cookie: every port of the host would be sent it")
        let bare = try f.client().request("GET", "/console")
        XCTAssertEqual(bare.status, 303)
        XCTAssertEqual(bare.header("Location"), "/console/")
        for file in ["/console/console.js", "/console/console.css"] {
            let r = try f.client().request("GET", file)
            XCTAssertEqual(r.status, 200, file)
            XCTAssertFalse(r.body.isEmpty, file)
        }
        // The page is the same for everyone: nothing of the store is in it.
        _ = try f.api.modifyZones(ZonesModifyRequest(json: ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Secrets"]]]]]),
                                  as: Caller(container: ServeFixture.container))
        XCTAssertFalse(try f.client().request("GET", "/console/").text.contains("Secrets"))
    }

    func testWithoutTheKeyEveryCallIsRefused() throws {
        let forged = String(repeating: "0", count: 64)
        let attempts: [[(String, String)]] = [
            [], [("X-CK-Console", "1")], [("X-CK-Console", forged)], [("X-CK-Console", String(token.dropLast()))],
            [("X-CK-Console", token.uppercased())], [("X-CK-Console", "")],
            // A second header is not a second chance.
            [("X-CK-Console", forged), call],
            // The key in a cookie is what another local port's server would have been sent: not a key.
            [("X-CK-Console", "1"), ("Cookie", "ck-console-\(f.port)=\(token!)")],
        ]
        for path in ["/console/api/overview", wsPath, "/console/api/requests"] {
            for headers in attempts {
                let r = try f.client().request("GET", path, headers: headers)
                XCTAssertEqual(r.status, 403, "\(path) \(headers.map { $0.0 })")
                XCTAssertEqual((r.json as? [String: Any])?["serverErrorCode"] as? String, "ACCESS_DENIED", path)
                XCTAssertNil(r.header("Access-Control-Allow-Origin"), path)
            }
            // ?token= on a call is no key either.
            XCTAssertEqual(try f.client().request("GET", path + "?token=" + token).status, 403, path)
        }
        XCTAssertEqual(try f.client().request("GET", "/console/api/overview", headers: [call]).status, 200)
        let missing = try f.client().request("GET", "/console/api/overview")
        XCTAssertTrue(missing.text.contains("#key="), missing.text)
        let stale = try f.client().request("GET", "/console/api/overview", headers: [("X-CK-Console", forged)])
        XCTAssertTrue(stale.text.contains("new one each time it starts"), stale.text)
    }

    func testABrowserTurnedAwayGetsAPageSayingWhy() throws {
        let page = try f.client().request("GET", "/console/", headers: [("Accept", "text/html,application/xhtml+xml"), ("Sec-Fetch-Site", "cross-site")])
        XCTAssertEqual(page.status, 403)
        XCTAssertTrue(page.text.contains("The console refused this request"), page.text)
        XCTAssertFalse(page.text.contains("console.js"), page.text)
    }

    func testAPageOfAnotherOriginIsRefusedEvenWithTheKey() throws {
        // http://localhost:3000 is an origin Web Services allows by default (CORS): not the console.
        for origin in ["http://evil.example", "http://localhost:3000", "null", "http://127.0.0.1:\(f.port).evil.example"] {
            for (method, path, body) in [("GET", "/console/", nil), ("GET", "/console/api/overview", nil), ("POST", wsPath, Array("{}".utf8))] as [(String, String, [UInt8]?)] {
                let r = try f.client().request(method, path, body: body, headers: [call, ("Origin", origin)])
                XCTAssertEqual(r.status, 403, "\(origin) \(path)")
                XCTAssertNil(r.header("Access-Control-Allow-Origin"), "\(origin) \(path)")
            }
        }
        for site in ["cross-site", "same-site"] {
            let r = try f.client().request("GET", "/console/api/overview", headers: [call, ("Sec-Fetch-Site", site)])
            XCTAssertEqual(r.status, 403, site)
        }
        // Its own page's requests pass: the origin named as the browser names it.
        for origin in ["http://127.0.0.1:\(f.port)", "http://localhost:\(f.port)"] {
            let r = try f.client().request("GET", "/console/api/overview", headers: [call, ("Origin", origin), ("Sec-Fetch-Site", "same-origin")])
            XCTAssertEqual(r.status, 200, origin)
        }
    }

    func testThePageAloneMayBeOpenedFromElsewhereAndNeverFramed() throws {
        // A link of another site, or ck console's launch file (file:// is cross-site).
        let navigate = [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-Dest", "document")]
        XCTAssertEqual(try f.client().request("GET", "/console/", headers: navigate).status, 200)
        for path in ["/console/console.js", "/console/console.css", "/console/api/overview", wsPath] {
            XCTAssertEqual(try f.client().request("GET", path, headers: navigate + [call]).status, 403, path)
        }
        // In a frame, or fetched by another site's script: refused.
        for (mode, dest) in [("navigate", "iframe"), ("cors", "empty"), ("no-cors", "document")] {
            let r = try f.client().request("GET", "/console/", headers: [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", mode), ("Sec-Fetch-Dest", dest)])
            XCTAssertEqual(r.status, 403, "\(mode) \(dest)")
        }
    }

    func testTheEnginesOwnRefusalsKeepTheConsolesHeaders() throws {
        // Too large to read: refused by the engine before the console sees it, with no CORS
        // for another origin to read it by.
        let c = try f.client()
        try c.send("POST /console/api/faults HTTP/1.1\r\nHost: 127.0.0.1:\(f.port)\r\nX-CK-Console: \(token!)\r\nOrigin: http://127.0.0.1:\(f.port)\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n")
        let r = try c.readAnswer()
        XCTAssertEqual(r.status, 413)
        XCTAssertNil(r.header("Access-Control-Allow-Origin"))
        XCTAssertTrue(r.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true, "\(r.status)")
    }

    func testLoopbackIsAnAddressNotAName() {
        for h in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] { XCTAssertTrue(WebServicesServer.isLoopback(h), h) }
        for h in ["127.corp.example", "127.0.0.1.nip.io", "0.0.0.0", "127.0.0.256", "127.+1.0.1", "128.0.0.1", "::"] {
            XCTAssertFalse(WebServicesServer.isLoopback(h), h)
        }
    }

    func testAServerOffLoopbackHasNoConsole() throws {
        let open = try ServeFixture(host: "0.0.0.0")
        XCTAssertNil(open.server.consoleURL)
        let r = try open.client().request("GET", "/console/api/overview", headers: [("X-CK-Console", token)])
        XCTAssertEqual(r.status, 404)
        XCTAssertTrue(r.text.contains("loopback"), r.text)
    }

    func testAForeignHostIsRefused() throws {
        // DNS rebinding: evil.example resolved to 127.0.0.1, so the browser sends its name.
        let c = try f.client()
        try c.send("GET /console/api/overview HTTP/1.1\r\nHost: evil.example:\(f.port)\r\nX-CK-Console: \(token!)\r\nOrigin: http://evil.example:\(f.port)\r\n\r\n")
        let r = try c.readAnswer()
        XCTAssertEqual(r.status, 400)
        XCTAssertNil(r.header("Access-Control-Allow-Origin"))
        XCTAssertFalse(r.text.contains("containers"), r.text)
        // And one that names no host at all (HTTP/1.0): the console needs it.
        let c2 = try f.client()
        try c2.send("GET /console/api/overview HTTP/1.0\r\nX-CK-Console: \(token!)\r\n\r\n")
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

    func testAFormOrABlindPostCannotCarryTheKeySoCannotAct() throws {
        let modify = "/console/ws/database/1/\(ServeFixture.container)/development/private/zones/modify"
        let zone = #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Planted"}}}]}"#
        for type in ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"] {
            let r = try f.client().request("POST", modify, body: Array(zone.utf8), headers: [("Content-Type", type)])
            XCTAssertEqual(r.status, 403, type)
        }
        let zones = try f.api.listZones(as: Caller(container: ServeFixture.container)).jsonValue
        XCTAssertFalse("\(zones)".contains("Planted"), "\(zones)")
        XCTAssertEqual(try f.client().request("POST", modify, json: zone, headers: [call]).status, 200)
    }

    func testTheKeyNeverReachesTheLogs() throws {
        let forged = "f" + token.dropFirst()
        _ = try f.client().request("GET", "/console/")
        _ = try f.client().request("GET", "/console/api/overview", headers: [("X-CK-Console", forged)])
        _ = try f.client().request("GET", "/console/api/overview", headers: [call])
        _ = try f.client().request("GET", "/console/api/nothing", headers: [call])
        _ = try f.client().request("GET", wsPath, headers: [call])
        // The engine logs a request once it is answered: give the last line a moment.
        let deadline = Date().addingTimeInterval(2)
        while f.log.lines.count < 5 && Date() < deadline { usleep(10_000) }
        let log = f.log.lines.joined(separator: "\n")
        XCTAssertTrue(log.contains("/console/"), log)
        XCTAssertFalse(log.contains(token), log)
        XCTAssertFalse(log.contains(forged), log)
        // Nor the console's own request log, which a page shows.
        let requests = try f.client().request("GET", "/console/api/requests", headers: [call])
        XCTAssertTrue(requests.text.contains("zones/list"), requests.text)
        for e in (requests.json as? [String: Any])?["requests"] as? [[String: Any]] ?? [] {
            let id = try XCTUnwrap(e["id"] as? Int)
            let whole = try f.client().request("GET", "/console/api/requests/\(id)", headers: [call]).text
            XCTAssertFalse(whole.contains(token), whole)
        }
    }

    func testWebServicesThroughTheConsoleActAsTheDeviceOrAUserWhoSignedInHere() throws {
        _ = try f.api.signIn(SignInRequest(appleID: "bob@example.com"), as: Caller(container: ServeFixture.container))
        _ = try f.api.signIn(SignInRequest(appleID: "alice@example.com"), as: Caller(container: ServeFixture.container))
        let base = "/console/ws/database/1/\(ServeFixture.container)/development/private/"
        let made = try f.client().request("POST", base + "zones/modify", json: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#, headers: [call])
        XCTAssertEqual(made.status, 200, made.text)
        let saved = try f.client().request("POST", base + "records/modify", json: #"{"zoneID":{"zoneName":"Lists"},"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":{"n":{"value":1}}}}]}"#, headers: [call])
        XCTAssertEqual(saved.status, 200, saved.text)
        let caller = Caller(container: ServeFixture.container)
        let record = try f.api.lookupRecords(LookupRecordsRequest(json: ["zoneID": ["zoneName": "Lists"], "records": [["recordName": "a"]]]), as: caller).jsonValue
        XCTAssertEqual(record["records"]?.arrayValue?.first?["modified"]?["deviceID"]?.stringValue, "console")
        // Bob, who signed in on this device, sees his own private database: not Alice's zone.
        let bobs = try f.client().request("GET", base + "zones/list?as=bob%40example.com", headers: [call])
        XCTAssertEqual(bobs.status, 200, bobs.text)
        XCTAssertFalse(bobs.text.contains("Lists"), bobs.text)
        let hers = try f.client().request("GET", base + "zones/list", headers: [call])
        XCTAssertTrue(hers.text.contains("Lists"), hers.text)
        // Someone who never signed in here is nobody the console can act as.
        let stranger = try f.client().request("GET", base + "zones/list?as=mallory%40example.com", headers: [call])
        XCTAssertNotEqual(stranger.status, 200, stranger.text)
        XCTAssertFalse(stranger.text.contains("Lists"), stranger.text)
    }

    func testAQueryRefusedForWantOfAnIndexNamesItAndTheConsoleCanAddIt() throws {
        let base = "/console/ws/database/1/\(ServeFixture.container)/development/private/"
        _ = try f.client().request("POST", base + "records/modify", json: #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","fields":{"n":{"value":1}}}}]}"#, headers: [call])
        let query = #"{"query":{"recordType":"T"}}"#
        let refused = try f.client().request("POST", base + "records/query", json: query, headers: [call])
        XCTAssertEqual(refused.status, 400, refused.text)
        XCTAssertEqual((refused.json as? [String: Any])?["serverErrorCode"] as? String, "BAD_REQUEST")
        XCTAssertEqual(refused.header("X-CK-Index-Needed"), "T ___recordID QUERYABLE")
        let add = try f.client().request("POST", "/console/api/schema/index", json: #"{"container":"\#(ServeFixture.container)","environment":"development","recordType":"T","fieldName":"___recordID","index":"QUERYABLE"}"#, headers: [call])
        XCTAssertEqual(add.status, 200, add.text)
        let answered = try f.client().request("POST", base + "records/query", json: query, headers: [call])
        XCTAssertEqual(answered.status, 200, answered.text)
        XCTAssertTrue(answered.text.contains("\"recordName\":\"a\""), answered.text)
    }

    func testTheOverviewListsContainersUsersAndTheDevice() throws {
        for c in ["iCloud.com.example.other", ServeFixture.container] {
            _ = try f.api.modifyZones(ZonesModifyRequest(json: ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Z"]]]]]),
                                      as: Caller(container: c))
        }
        let r = try f.client().request("GET", "/console/api/overview", headers: [call])
        XCTAssertEqual(r.status, 200, r.text)
        let o = try XCTUnwrap(r.json as? [String: Any])
        let containers = (o["containers"] as? [[String: Any]])?.compactMap { $0["containerIdentifier"] as? String }
        XCTAssertEqual(containers, ["iCloud.com.example.other", ServeFixture.container].sorted())
        XCTAssertEqual((o["device"] as? [String: Any])?["appleID"] as? String, "alice@example.com")
        XCTAssertEqual((o["users"] as? [[String: Any]])?.compactMap { $0["appleID"] as? String }, ["alice@example.com"])
    }
}
