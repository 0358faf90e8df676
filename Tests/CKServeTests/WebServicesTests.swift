import CKCore
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// ck serve's routes over real sockets, in-process: Web Services bodies in, the API's answers
/// out, with the statuses, envelopes and headers of Apple's servers.
final class WebServicesTests: XCTestCase {
    func object(_ a: HTTPTestClient.Answer, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let o = a.json as? [String: Any] else { XCTFail("not a JSON object: \(a.status) \(a.text)", file: file, line: line); return [:] }
        return o
    }

    /// Every refusal is the envelope {uuid, serverErrorCode, reason} with its status.
    func assertEnvelope(_ a: HTTPTestClient.Answer, _ status: Int, _ code: String, _ words: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.status, status, a.text, file: file, line: line)
        let o = object(a, file: file, line: line)
        XCTAssertEqual(o["serverErrorCode"] as? String, code, a.text, file: file, line: line)
        XCTAssertNotNil(o["uuid"] as? String, a.text, file: file, line: line)
        XCTAssertNotNil(o["reason"] as? String, a.text, file: file, line: line)
        XCTAssertNil(o["ckErrorCode"], "Apple's envelope has no ckErrorCode", file: file, line: line)
        if let w = words { XCTAssertTrue((o["reason"] as? String ?? "").contains(w), "\(a.text) lacks '\(w)'", file: file, line: line) }
        XCTAssertTrue(a.header("Content-Type")?.hasPrefix("application/json") ?? false, file: file, line: line)
    }

    func testRecordsGoInAndComeOutAsTheAPIAnswers() throws {
        let f = try ServeFixture()
        let zone = try f.post("private", "zones/modify", #"{"operations":[{"zone":{"zoneID":{"zoneName":"Lists"}},"operationType":"create"}]}"#)
        XCTAssertEqual(zone.status, 200, zone.text)
        let saved = try f.post("private", "records/modify", """
            {"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"todo-1","fields":{"title":{"value":"Milk"},"n":{"value":1}}}}],
             "zoneID":{"zoneName":"Lists"}}
            """)
        XCTAssertEqual(saved.status, 200, saved.text)
        let record = (object(saved)["records"] as? [[String: Any]])?.first
        XCTAssertEqual(record?["recordName"] as? String, "todo-1")
        XCTAssertNotNil(record?["recordChangeTag"] as? String)
        // The same bytes as the API gives for the same state.
        let looked = try f.post("private", "records/lookup", #"{"records":[{"recordName":"todo-1"}],"zoneID":{"zoneName":"Lists"}}"#)
        var direct: [UInt8] = []
        try f.api.lookupRecords(try LookupRecordsRequest(json: try JSONParser.parse(Array(#"{"records":[{"recordName":"todo-1"}],"zoneID":{"zoneName":"Lists"}}"#.utf8))), as: f.alice)
            .encodeJSON(into: &direct, pretty: false)
        XCTAssertEqual(looked.text, String(decoding: direct, as: UTF8.self))
        // A stale tag: CONFLICT is an item of a 200 answer, as CloudKit JS expects.
        let stale = try f.post("private", "records/modify", """
            {"operations":[{"operationType":"update","record":{"recordName":"todo-1","recordChangeTag":"zzz","fields":{"title":{"value":"Eggs"}}}}],"zoneID":{"zoneName":"Lists"}}
            """)
        XCTAssertEqual(stale.status, 200)
        XCTAssertEqual((object(stale)["records"] as? [[String: Any]])?.first?["serverErrorCode"] as? String, "CONFLICT")
        // No CLI-only ckErrorCode: CloudKit JS would take it over the server code.
        XCTAssertNil((object(stale)["records"] as? [[String: Any]])?.first?["ckErrorCode"], stale.text)
        // Lists are GETs; changes come once each.
        let zones = try f.get("private", "zones/list")
        XCTAssertEqual((object(zones)["zones"] as? [[String: Any]])?.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }.sorted(), ["Lists", "_defaultZone"])
        let changes = try f.post("private", "changes/zone", #"{"zones":[{"zoneID":{"zoneName":"Lists"}}]}"#)
        let entry = (object(changes)["zones"] as? [[String: Any]])?.first
        XCTAssertEqual((entry?["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String }, ["todo-1"])
        XCTAssertEqual(entry?["moreComing"] as? Bool, false)
        // Each request is one log line, without its tokens.
        XCTAssertTrue(f.log.lines.contains { $0.hasPrefix("POST /database/1/\(ServeFixture.container)/development/private/records/modify 200 ") }, "\(f.log.lines)")
        XCTAssertFalse(f.log.lines.contains { $0.contains(f.apiToken) || $0.contains("ckWebAuthToken") })
    }

    func testWithoutAnAPITokenOrWithAWrongOneIs401() throws {
        let f = try ServeFixture()
        let none = try f.client().request("POST", "/database/1/\(ServeFixture.container)/development/public/records/query", json: #"{"query":{"recordType":"Item"}}"#)
        assertEnvelope(none, 401, "AUTHENTICATION_FAILED")
        let wrong = try f.client().request("POST", f.path("public", "records/query", token: String(repeating: "0", count: 64)), json: #"{"query":{"recordType":"Item"}}"#)
        assertEnvelope(wrong, 401, "AUTHENTICATION_FAILED")
        // Another environment's token is not this one's.
        let prod = try f.client().request("POST", f.path("public", "records/query").replacingOccurrences(of: "/development/", with: "/production/"),
                                          json: #"{"query":{"recordType":"Item"}}"#)
        assertEnvelope(prod, 401, "AUTHENTICATION_FAILED")
    }

    /// Signed out: user-bound calls are 421 with a redirectURL whose sign-in answers a session
    /// that then works; the public database still reads.
    func testASignedOutCallerIsSentToSignInAndComesBackWithASession() throws {
        let f = try ServeFixture()
        let caller = try f.get("public", "users/caller", signedIn: false)
        assertEnvelope(caller, 421, "AUTHENTICATION_REQUIRED")
        let redirect = try XCTUnwrap(object(caller)["redirectURL"] as? String)
        XCTAssertTrue(redirect.hasPrefix(f.url + "/signin/"), redirect)
        assertEnvelope(try f.post("private", "records/query", #"{"query":{"recordType":"Item"}}"#, signedIn: false), 421, "AUTHENTICATION_REQUIRED")
        try f.api.defineQueryableType("Item", container: ServeFixture.container)
        XCTAssertEqual(try f.post("public", "records/query", #"{"query":{"recordType":"Item"}}"#, signedIn: false).status, 200)

        let signIn = try f.client().request("GET", String(redirect.dropFirst(f.url.count)), headers: [("Accept", "application/json")])
        XCTAssertEqual(signIn.status, 200, signIn.text)
        let token = try XCTUnwrap(object(signIn)["ckSession"] as? String)
        let me = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/public/users/caller?ckAPIToken=\(f.apiToken)&ckWebAuthToken="
                                        + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token))
        XCTAssertEqual(me.status, 200, me.text)
        XCTAssertNotNil(object(me)["userRecordName"] as? String, "users/caller answers the identity itself")
        // In a browser: the page that asked (its Origin) is the one the popup posts the session to.
        let asked = try f.client().request("GET", f.path("public", "users/caller", signedIn: false), headers: [("Origin", "http://localhost:3000")])
        let popup = String(try XCTUnwrap(object(asked)["redirectURL"] as? String).dropFirst(f.url.count))
        XCTAssertTrue(popup.hasSuffix("?origin=http%3A%2F%2Flocalhost%3A3000"), popup)
        let page = try f.client().request("GET", popup)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("alice@example.com"))
        let posted = try f.client().request("POST", popup, body: Array("appleID=alice%40example.com".utf8),
                                            headers: [("Content-Type", "application/x-www-form-urlencoded")])
        XCTAssertTrue(posted.text.contains(#"window.opener.postMessage({"ckSession":"#), posted.text)
        // Posted by a page of another site (cross-site request forgery): refused, no session.
        let forged = try f.client().request("POST", popup, body: Array("appleID=alice%40example.com".utf8),
                                            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "https://evil.example")])
        XCTAssertEqual(forged.status, 403)
        XCTAssertFalse(forged.text.contains("ckSession"))
        // From the page itself (its own origin): signed in.
        let own = try f.client().request("POST", popup, body: Array("appleID=alice%40example.com".utf8),
                                         headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", f.url)])
        XCTAssertTrue(own.text.contains("ckSession"), own.text)
    }

    /// The sign-in page takes a new Apple ID too: the user is made, gets a session of their
    /// own, and the device stays signed in as it was. A signed-out device refuses, writing nothing.
    func testTheSignInPageSignsInANewAppleIDWithoutTouchingTheDevice() throws {
        let f = try ServeFixture()
        let page = "/signin/\(ServeFixture.container)/development?origin=http%3A%2F%2Flocalhost%3A3000"
        XCTAssertTrue(try f.client().request("GET", page).text.contains("name=\"newAppleID\""))
        let posted = try f.client().request("POST", page, body: Array("newAppleID=carol%2Bweb%40example.com&keepSignedIn=true".utf8),
                                            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", f.url)])
        XCTAssertEqual(posted.status, 200, posted.text)
        let literal = try XCTUnwrap(posted.text.range(of: #"\{"ckSession":"[^"]+"\}"#, options: .regularExpression).map { String(posted.text[$0]) })
        let token = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(literal.utf8)) as? [String: Any])?["ckSession"] as? String)
        let carol = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/public/users/caller?ckAPIToken=\(f.apiToken)&ckWebAuthToken=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token))
        XCTAssertEqual(carol.status, 200, carol.text)
        let alice = try f.client().request("GET", f.path("public", "users/caller"))
        XCTAssertNotEqual(object(carol)["userRecordName"] as? String, object(alice)["userRecordName"] as? String)
        let device = try f.api.accountStatus(AccountStatusRequest(), as: Caller(container: ServeFixture.container))
        XCTAssertEqual(device.document["appleID"]?.stringValue, "alice@example.com", "the device is still alice's")

        _ = try f.api.signOut(as: Caller(container: ServeFixture.container))
        let before = try snapshot(f.root)
        let refused = try f.client().request("POST", page, body: Array("newAppleID=dave%40example.com".utf8),
                                             headers: [("Content-Type", "application/x-www-form-urlencoded")])
        XCTAssertEqual(refused.status, 403, refused.text)
        XCTAssertEqual(try snapshot(f.root), before, "nothing written for a refused sign-in")
    }

    func testBadRequestsGetTheirStatusAndTheEnvelope() throws {
        let f = try ServeFixture()
        let before = try snapshot(f.root)
        assertEnvelope(try f.client().request("GET", "/nowhere"), 404, "NOT_FOUND")
        assertEnvelope(try f.client().request("GET", "/database/1/\(ServeFixture.container)/staging/public/records/query"), 404, "NOT_FOUND", "development or production")
        assertEnvelope(try f.client().request("POST", f.path("public", "records/explode"), json: "{}"), 404, "NOT_FOUND")
        // The reason shows the whole path, not its first 40 characters (which end inside the
        // container's name).
        let typo = "/database/1/\(ServeFixture.container)/development/private/record/modify"
        assertEnvelope(try f.client().request("POST", typo + "?ckAPIToken=\(f.apiToken)", json: "{}"), 404, "NOT_FOUND", "no such path '\(typo)'")
        // The token endpoints where Apple's reference documents them: CloudKit answers 405 there
        // (its live service routes them under /device/1/ only, as CloudKit JS sends them).
        for misplaced in ["/database/1/\(ServeFixture.container)/development/tokens/create", f.path("private", "tokens/register")] {
            let a = try f.client().request("POST", misplaced + "?ckAPIToken=\(f.apiToken)", json: #"{"apnsEnvironment":"development"}"#)
            assertEnvelope(a, 405, "NOT_FOUND", "POST /device/1/\(ServeFixture.container)/development/tokens/")
            XCTAssertEqual(a.header("Allow"), "OPTIONS", misplaced)
        }
        assertEnvelope(try f.post("private", "records/modify", "{not json"), 400, "BAD_REQUEST", "not JSON")
        assertEnvelope(try f.post("private", "records/modify", #"{"operations": 3}"#), 400, "BAD_REQUEST")
        assertEnvelope(try f.client().request("GET", f.path("private", "records/modify")), 400, "BAD_REQUEST", "POST")
        assertEnvelope(try f.client().request("POST", f.path("private", "records/modify"), body: []), 400, "BAD_REQUEST", "JSON body")
        let big = Array(repeating: UInt8(ascii: " "), count: WebServicesHandler.requestBodyLimit + 1)
        assertEnvelope(try f.client().request("POST", f.path("private", "records/modify"), body: big), 413, "LIMIT_EXCEEDED")
        // A page on another site reaching 127.0.0.1 through its own name (DNS rebinding).
        let c = try f.client()
        try c.send("GET \(f.path("public", "users/caller")) HTTP/1.1\r\nHost: evil.example:\(f.port)\r\n\r\n")
        assertEnvelope(try c.readAnswer(), 400, "BAD_REQUEST", "not this server")
        XCTAssertEqual(try snapshot(f.root), before, "refused requests change nothing")
    }

    /// Faults armed with `ck fault add` fail HTTP requests with their status, body and
    /// Retry-After; NETWORK_FAILURE drops the connection.
    func testArmedFaultsFailHTTPRequestsAsTheServiceWould() throws {
        let f = try ServeFixture()
        try f.api.defineQueryableType("Item", container: ServeFixture.container)
        _ = try f.api.addFault(AddFaultRequest(json: try JSONParser.parse(Array(#"{"op":"records/query","error":"THROTTLED","retryAfter":3,"times":1}"#.utf8))))
        let throttled = try f.post("public", "records/query", #"{"query":{"recordType":"Item"}}"#)
        assertEnvelope(throttled, 429, "THROTTLED")
        XCTAssertEqual(throttled.header("Retry-After"), "3")
        XCTAssertEqual(object(throttled)["retryAfter"] as? Int, 3)
        XCTAssertEqual(try f.post("public", "records/query", #"{"query":{"recordType":"Item"}}"#).status, 200, "times 1: the next one passes")
        _ = try f.api.addFault(AddFaultRequest(json: try JSONParser.parse(Array(#"{"op":"zones/list","error":"NETWORK_FAILURE","times":1}"#.utf8))))
        let c = try f.client()
        try c.send("GET \(f.path("private", "zones/list")) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        XCTAssertTrue(c.isClosedByServer(), "no answer: the connection drops")
    }

    func testAnAssetIsUploadedSavedAndDownloaded() throws {
        let f = try ServeFixture()
        let urls = try f.post("private", "assets/upload", #"{"tokens":[{"fieldName":"file","recordType":"Doc","recordName":"doc-1"}],"zoneID":{"zoneName":"_defaultZone"}}"#)
        XCTAssertEqual(urls.status, 200, urls.text)
        let upload = try XCTUnwrap((object(urls)["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        XCTAssertTrue(upload.hasPrefix(f.url + "/upload/"))
        let bytes = Array("the asset's bytes".utf8)
        let up = try f.client().request("POST", String(upload.dropFirst(f.url.count)), body: bytes, headers: [("Content-Type", "text/plain")])
        XCTAssertEqual(up.status, 200, up.text)
        let single = try XCTUnwrap(object(up)["singleFile"] as? [String: Any])
        XCTAssertNotNil(single["receipt"])
        let singleJSON = String(decoding: try JSONSerialization.data(withJSONObject: single), as: UTF8.self)
        let saved = try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Doc","recordName":"doc-1","fields":{"file":{"value":\#(singleJSON)}}}}]}"#)
        XCTAssertEqual(saved.status, 200, saved.text)
        let file = ((object(saved)["records"] as? [[String: Any]])?.first?["fields"] as? [String: Any])?["file"] as? [String: Any]
        let download = try XCTUnwrap((file?["value"] as? [String: Any])?["downloadURL"] as? String, saved.text)
        XCTAssertTrue(download.hasPrefix(f.url + "/assets/"), download)
        let got = try f.client().request("GET", String(download.dropFirst(f.url.count)))
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.body, bytes)
        // Stored bytes never run as a page of the server's origin (where the console's key is).
        XCTAssertEqual(got.header("X-Content-Type-Options"), "nosniff")
        XCTAssertTrue(got.header("Content-Security-Policy")?.hasPrefix("sandbox") == true)
        assertEnvelope(try f.client().request("POST", "/upload/ck1u.forged.token", body: bytes), 401, "AUTHENTICATION_FAILED")
        assertEnvelope(try f.client().request("GET", "/assets/00/" + String(repeating: "0", count: 64)), 404, "NOT_FOUND")
        assertEnvelope(try f.client().request("GET", "/assets/..%2F/etc"), 404, "NOT_FOUND")
    }

    /// A web client registered with tokens/create long-polls its webcourierURL and gets each
    /// notification of its user once, whoever made the change (here the API, as the CLI does).
    func testAWebClientLongPollsForItsUsersNotifications() throws {
        let f = try ServeFixture(pollSeconds: 1)
        let made = try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/create?ckAPIToken=\(f.apiToken)&ckWebAuthToken="
                                          + (f.session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? f.session), json: #"{"apnsEnvironment":"development"}"#)
        XCTAssertEqual(made.status, 200, made.text)
        let courier = try XCTUnwrap(object(made)["webcourierURL"] as? String)
        XCTAssertTrue(courier.hasPrefix(f.url + "/webcourier/"))
        XCTAssertEqual(try f.post("private", "subscriptions/modify", #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"items","subscriptionType":"query","query":{"recordType":"Item"},"firesOn":["create"]}}]}"#).status, 200)
        // Nothing yet: null after the poll's time.
        let idle = try f.client().request("GET", String(courier.dropFirst(f.url.count)))
        XCTAssertEqual(idle.text, "null")
        _ = try f.api.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .create, recordName: "n1", recordType: "Item", recordChangeTag: nil, fields: [:])]),
                                    as: Caller(container: ServeFixture.container, deviceID: "phone"))
        let push = try f.client().request("GET", String(courier.dropFirst(f.url.count)))
        let ck = object(push)["ck"] as? [String: Any]
        XCTAssertEqual((ck?["qry"] as? [String: Any])?["rid"] as? String, "n1", push.text)
        XCTAssertEqual(try f.client().request("GET", String(courier.dropFirst(f.url.count))).text, "null", "delivered once")
    }

    func testBrowserPagesOfAllowedOriginsMayReadAnswers() throws {
        let f = try ServeFixture()
        let ok = try f.client().request("GET", f.path("private", "zones/list"), headers: [("Origin", "http://localhost:3000")])
        XCTAssertEqual(ok.header("Access-Control-Allow-Origin"), "http://localhost:3000")
        XCTAssertTrue(ok.header("Access-Control-Expose-Headers")?.contains("X-Apple-CloudKit-Web-Auth-Token") ?? false)
        let evil = try f.client().request("GET", f.path("private", "zones/list"), headers: [("Origin", "https://evil.example")])
        XCTAssertNil(evil.header("Access-Control-Allow-Origin"))
        let pre = try f.client().request("OPTIONS", f.path("private", "zones/list"),
                                         headers: [("Origin", "http://127.0.0.1:8080"), ("Access-Control-Request-Headers", "x-apple-cloudkit-request-keyid")])
        XCTAssertEqual(pre.status, 204)
        XCTAssertEqual(pre.header("Access-Control-Allow-Origin"), "http://127.0.0.1:8080")
        XCTAssertFalse(AllowedOrigins([]).allows("http://localhost:3000.evil.example"))
        XCTAssertFalse(AllowedOrigins([]).allows("http://localhost:"))
        XCTAssertTrue(AllowedOrigins(["https://app.example"]).allows("https://app.example"))
        XCTAssertFalse(AllowedOrigins(["https://app.example"]).allows("http://localhost:3000"))
    }

    func testPathsAreRoutedAsApplesAre() throws {
        XCTAssertEqual(try WebServicesRoute.parse("/database/1/iCloud.x/development/shared/changes/database"),
                       .database(container: "iCloud.x", environment: .development, scope: .shared, endpoint: .changesDatabase))
        XCTAssertEqual(try WebServicesRoute.parse("/database/1/iCloud.x/production/public/users/lookup/email"),
                       .database(container: "iCloud.x", environment: .production, scope: .public, endpoint: .usersLookupEmail))
        XCTAssertEqual(try WebServicesRoute.parse("/device/1/iCloud.x/development/tokens/create"), .device(container: "iCloud.x", environment: .development, endpoint: .tokensCreate))
        for bad in ["", "/", "/database/1/iCloud.x/development/public", "/database/2/iCloud.x/development/public/zones/list",
                    "/device/1/iCloud.x/development/records/query",
                    "/database/1/iCloud.x/development/other/zones/list", "/database/1/iCloud.x/development/public/account/status"] {
            XCTAssertThrowsError(try WebServicesRoute.parse(bad), bad) { XCTAssertEqual(($0 as? CloudKitError)?.code, .notFound) }
        }
        for misplaced in ["/database/1/iCloud.x/development/public/tokens/create", "/database/1/iCloud.x/production/tokens/register"] {
            XCTAssertThrowsError(try WebServicesRoute.parse(misplaced), misplaced) { XCTAssertEqual(($0 as? WebServicesRoute.MethodNotAllowed)?.error.code, .notFound) }
        }
        XCTAssertEqual(WebServicesHandler.loggedPath("/upload/ck1u.secret"), "/upload/…")
        XCTAssertEqual(WebServicesHandler.loggedPath("/webcourier/iCloud.x/development/abcd"), "/webcourier/iCloud.x/development/…")
        XCTAssertEqual(QueryString("a=1&ckWebAuthToken=x%2By%3D%3D&b")["ckWebAuthToken"], "x+y==")
        XCTAssertNil(QueryString("a=%zz")["a"])
        XCTAssertEqual(WebServicesHandler.deviceID("3f0c-AB"), "web-3f0c-AB")
        XCTAssertEqual(WebServicesHandler.deviceID("../../x"), "web")
        // Codes Apple's status table leaves out get the nearest; a network failure has no answer.
        XCTAssertEqual(ServerErrorCode.changeTokenExpired.httpStatus, 400)
        XCTAssertEqual(ServerErrorCode.limitExceeded.httpStatus, 400)
        XCTAssertEqual(ServerErrorCode.alreadyShared.httpStatus, 409)
        XCTAssertNil(ServerErrorCode.networkFailure.httpStatus)
    }

    /// A path splits on its bytes into every segment, empty ones included; a Host field is
    /// split on its bytes when ASCII and on its Characters when not, to the same names.
    func testPathSegmentsAndHostNames() throws {
        XCTAssertEqual(WebServicesRoute.segments("/"), [""])
        XCTAssertEqual(WebServicesRoute.segments("/a"), ["a"])
        XCTAssertEqual(WebServicesRoute.segments("/a/"), ["a", ""])
        XCTAssertEqual(WebServicesRoute.segments("//x//"), ["", "x", "", ""])
        XCTAssertEqual(WebServicesRoute.segments("/caf\u{e9}/e\u{301}"), ["caf\u{e9}", "e\u{301}"])
        XCTAssertThrowsError(try WebServicesRoute.parse("/database/1/iCloud.x/development/public/records/query/"), "a trailing slash names no endpoint")
        XCTAssertEqual(try WebServicesRoute.parse("/database/1/iCloud.x/development/public/records/query"),
                       .database(container: "iCloud.x", environment: .development, scope: .public, endpoint: .recordsQuery))
        let names: [(String, String?)] = [
            ("localhost:8080", "localhost"), ("LocalHost", "localhost"), ("127.0.0.1", "127.0.0.1"), ("h:", "h"), ("", ""),
            ("[::1]:80", "::1"), ("[::1]", "::1"), ("[::1]x", nil), ("[::1", nil), ("h:123456", nil), ("h:8a", nil),
            ("localhost:80@evil.example", nil), ("\u{C9}XAMPLE:80", "\u{E9}xample"), ("a:\u{301}80", "a:\u{301}80"),
        ]
        for (host, name) in names { XCTAssertEqual(WebServicesHandler.hostName(host), name, host.debugDescription) }
    }

    private func snapshot(_ root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: root) else { return out }
        while let rel = e.nextObject() as? String { out[rel] = fm.contents(atPath: root + "/" + rel) ?? Data("dir".utf8) }
        return out
    }
}

/// Web auth tokens over HTTP: rotated through X-Apple-CloudKit-Web-Auth-Token once a minute
/// old, the new one working; the old one until its own expiry (live CloudKit), or for its
/// grace only under `--strict-token-rotation`; signing out ends them.
final class WebSessionOverHTTPTests: XCTestCase {

    func reason(_ a: HTTPTestClient.Answer) -> String { ((a.json as? [String: Any])?["reason"] as? String) ?? a.text }

    /// The scenario both modes share, up to the replaced token's fate three minutes on.
    func rotate(_ rotation: WebTokenRotation) throws -> (f: ServeFixture, now: Now, caller: (String) throws -> HTTPTestClient.Answer, next: String) {
        let now = Now(1_800_000_000_000)
        let f = try ServeFixture(clock: Clock { now.ms }, webTokenRotation: rotation)
        func caller(_ token: String) throws -> HTTPTestClient.Answer {
            try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/public/users/caller?ckAPIToken=\(f.apiToken)&ckWebAuthToken="
                                   + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token))
        }
        let fresh = try caller(f.session)
        XCTAssertEqual(fresh.status, 200)
        XCTAssertNil(fresh.header("X-Apple-CloudKit-Web-Auth-Token"), "a fresh token is not replaced")
        now.ms += 90_000
        let due = try caller(f.session)
        XCTAssertEqual(due.status, 200)
        let next = try XCTUnwrap(due.header("X-Apple-CloudKit-Web-Auth-Token"))
        XCTAssertNotEqual(next, f.session)
        XCTAssertEqual(try caller(next).status, 200)
        XCTAssertEqual(try caller(f.session).status, 200, "the replaced token works for the requests in flight")
        now.ms += 3 * 60_000
        return (f, now, caller, next)
    }

    /// By default, as live CloudKit: the replaced token works until its own expiry.
    func testAReplacedTokenWorksUntilItExpires() throws {
        let (f, now, caller, next) = try rotate(.live)
        let late = try caller(f.session)
        XCTAssertEqual(late.status, 200, "three minutes on: still taken")
        XCTAssertNil(late.header("X-Apple-CloudKit-Web-Auth-Token"), "a replaced token is not replaced again")
        now.ms = 1_800_000_000_000 + 30 * 60_000
        let expired = try caller(f.session)
        XCTAssertEqual(expired.status, 421, "at its own expiry, dead")
        XCTAssertTrue(reason(expired).contains("expired at"), reason(expired))
        XCTAssertEqual(try caller(next).status, 200)
        // An error answer carries no new token.
        now.ms += 90_000
        let refused = try f.client().request("POST", f.path("private", "records/modify").replacingOccurrences(of: f.session, with: next), json: "{bad")
        XCTAssertEqual(refused.status, 400)
        XCTAssertNil(refused.header("X-Apple-CloudKit-Web-Auth-Token"))
        _ = try f.api.signOut(as: Caller(container: ServeFixture.container))
        XCTAssertEqual(try caller(next).status, 421, "signing out revokes the session")
    }

    /// `ck serve --strict-token-rotation`: Apple's documented single use, after a grace.
    func testUnderStrictRotationAReplacedTokenIsRefusedAfterItsGrace() throws {
        let (f, _, caller, next) = try rotate(.strict)
        let dead = try caller(f.session)
        XCTAssertEqual(dead.status, 421)
        XCTAssertEqual((dead.json as? [String: Any])?["serverErrorCode"] as? String, "AUTHENTICATION_REQUIRED")
        XCTAssertNotNil((dead.json as? [String: Any])?["redirectURL"] as? String)
        XCTAssertTrue(reason(dead).contains("was replaced at") && reason(dead).contains("--strict-token-rotation"), reason(dead))
        XCTAssertEqual(try caller(next).status, 200)
    }
}
