import CKCore
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe
@testable import CKStore

/// What ck serve refuses, and how it says so (issue 35, items 6, 18, 24, 25): credentials
/// refused before a body is read, the Host check against names that only start like the
/// server's, CORS patterns, and a request log that explains each refusal without a secret.
final class ServeRefusalTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/auth")

    private func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }

    /// Sends a head announcing a 2 MB body and none of the body; the answer that comes within
    /// two seconds (nil: the server waits for the body).
    private func headOnly(_ f: ServeFixture, _ target: String, headers: [(String, String)] = []) throws -> RawResponse? {
        let c = try RawHTTPClient(port: f.port, timeout: 2)
        let fields = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        XCTAssertTrue(c.send("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(f.port)\r\nContent-Length: 2000000\r\n\(fields)\r\n"))
        return c.readResponse()
    }

    /// The log line of the first request whose line contains `text`, once it is written.
    private func line(_ f: ServeFixture, containing text: String) -> String? {
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            if let l = f.log.lines.first(where: { $0.contains(text) }) { return l }
            usleep(5_000)
        }
        return nil
    }

    // MARK: credentials before the body (item 6)

    func testCredentialsTheHeadCarriesAreRefusedBeforeTheBodyIsRead() throws {
        let f = try ServeFixture()
        let base = "/database/1/\(ServeFixture.container)/development/public/records/query"
        for (target, headers, why) in [
            (base, [], "no ckAPIToken and no server-to-server signature"),
            (base + "?ckAPIToken=" + String(repeating: "ab", count: 32), [], "is not an API token of"),
            (base, [("X-Apple-CloudKit-Request-KeyID", "no-such-key"), ("X-Apple-CloudKit-Request-ISO8601Date", "2026-11-25T13:03:49Z"),
                    ("X-Apple-CloudKit-Request-SignatureV1", "AAAA")], "names no server-to-server key"),
        ] as [(String, [(String, String)], String)] {
            let answer = try XCTUnwrap(try headOnly(f, target, headers: headers), "\(target) \(headers): no answer before the body")
            XCTAssertEqual(answer.status, 401, answer.text)
            XCTAssertEqual(answer.json["serverErrorCode"] as? String, "AUTHENTICATION_FAILED")
            XCTAssertTrue((answer.json["reason"] as? String)?.contains(why) ?? false, answer.text)
        }
        // A token of the container: the body is waited for, then answered as usual.
        try f.api.defineQueryableType("Item", container: ServeFixture.container)
        let c = try RawHTTPClient(port: f.port, timeout: 2)
        let body = #"{"query":{"recordType":"Item"}}"#
        XCTAssertTrue(c.send("POST \(base)?ckAPIToken=\(f.apiToken) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n"))
        usleep(200_000)
        XCTAssertTrue(c.send(body))
        XCTAssertEqual(c.readResponse()?.status, 200)
    }

    /// A signature's key and date are in its head, and so are the database and endpoint it is
    /// sent to: a date out of the clock's window, or a key sent where keys do not reach, is
    /// refused before the body; the signature itself (which covers the body) after it.
    func testASignatureDatedOutsideTheWindowIsRefusedBeforeTheBody() throws {
        let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent("signed-requests.json"))) as? [String: Any])
        let keyID = try XCTUnwrap(o["keyID"] as? String)
        let date = "2026-11-25T13:03:49Z"
        let ms = Int64(try XCTUnwrap(ISO8601DateFormatter().date(from: date)).timeIntervalSince1970 * 1000)
        let f = try ServeFixture(clock: Clock { ms + 10 * 60_000 }, container: "iCloud.com.example.test")
        _ = try f.api.addServerKey(keyID: keyID, publicKeyPEM: try String(contentsOf: Self.fixtures.appendingPathComponent("server-key-public.pem"), encoding: .utf8),
                                   container: "iCloud.com.example.test", environment: .development, as: Caller(container: "iCloud.com.example.test"))
        let answer = try XCTUnwrap(try headOnly(f, "/database/1/iCloud.com.example.test/development/public/records/query",
                                                headers: [("X-Apple-CloudKit-Request-KeyID", keyID), ("X-Apple-CloudKit-Request-ISO8601Date", date),
                                                          ("X-Apple-CloudKit-Request-SignatureV1", "AAAA")]))
        XCTAssertEqual(answer.status, 401, answer.text)
        XCTAssertTrue((answer.json["reason"] as? String)?.contains("within 5 minutes") ?? false, answer.text)
        let now = "2026-11-25T13:13:49Z"
        for (target, why) in [("/database/1/iCloud.com.example.test/development/private/records/query", "reaches only the public database"),
                              ("/database/1/iCloud.com.example.test/development/public/users/discover", "may not use users/discover")] {
            let refused = try XCTUnwrap(try headOnly(f, target, headers: [("X-Apple-CloudKit-Request-KeyID", keyID), ("X-Apple-CloudKit-Request-ISO8601Date", now),
                                                                          ("X-Apple-CloudKit-Request-SignatureV1", "AAAA")]), "\(target): no answer before the body")
            XCTAssertEqual(refused.status, 403, refused.text)
            XCTAssertTrue((refused.json["reason"] as? String)?.contains(why) ?? false, refused.text)
        }
    }

    // MARK: Host (item 24)

    /// DNS rebinding sends the attacker's own name as Host: a name that only starts with one
    /// of the server's is not the server's.
    func testHostsThatOnlyStartWithTheServersNameAreRefused() throws {
        let f = try ServeFixture()
        for host in ["localhost.evil.example", "127.0.0.1.evil.example", "localhost:80@evil", "localhost:80:80", "[::1]x", "[::1]:8o", "localhost.:80"] {
            let c = try RawHTTPClient(port: f.port)
            XCTAssertTrue(c.send("GET \(f.path("private", "zones/list")) HTTP/1.1\r\nHost: \(host)\r\n\r\n"))
            let answer = try XCTUnwrap(c.readResponse(), host)
            XCTAssertEqual(answer.status, 400, "Host \(host): \(answer.text)")
            XCTAssertTrue((answer.json["reason"] as? String)?.contains("is not this server") ?? false, answer.text)
        }
        for host in ["localhost", "LOCALHOST:\(f.port)", "127.0.0.1:\(f.port)", "[::1]:\(f.port)", "[::1]"] {
            let c = try RawHTTPClient(port: f.port)
            XCTAssertTrue(c.send("GET \(f.path("private", "zones/list")) HTTP/1.1\r\nHost: \(host)\r\n\r\n"))
            XCTAssertEqual(c.readResponse()?.status, 200, "Host \(host)")
        }
    }

    // MARK: CORS patterns (item 25)

    func testAPortPatternTakesOnlyANumericPort() {
        let defaults = AllowedOrigins([])
        for origin in ["http://localhost:3000", "http://127.0.0.1:8080", "http://localhost:1"] {
            XCTAssertTrue(defaults.allows(origin), origin)
        }
        for origin in ["http://localhost:ab", "http://localhost:3000ab", "http://localhost:", "http://localhost:123456", "http://localhost:3000/",
                       "http://localhost:3000.evil.example", "http://localhost", "https://localhost:3000", "http://127.0.0.1:-1", "http://localhost: 80"] {
            XCTAssertFalse(defaults.allows(origin), origin)
        }
        let custom = AllowedOrigins(["https://app.example:*"])
        XCTAssertTrue(custom.allows("https://app.example:8443"))
        XCTAssertFalse(custom.allows("https://app.example:ab"))
        XCTAssertFalse(custom.allows("https://app.example.evil:8443"))
    }

    // MARK: the log (item 18)

    func testTheLogExplainsEachRefusalWithoutItsSecrets() throws {
        let f = try ServeFixture()
        _ = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/private/zones/list")
        let none = try XCTUnwrap(line(f, containing: "zones/list 401"))
        XCTAssertTrue(none.contains("AUTHENTICATION_FAILED: the request carries no ckAPIToken"), none)

        let wrong = String(repeating: "cd", count: 32)
        _ = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/private/users/caller?ckAPIToken=\(wrong)")
        let unknown = try XCTUnwrap(line(f, containing: "users/caller 401"))
        XCTAssertTrue(unknown.contains("AUTHENTICATION_FAILED: "), unknown)
        XCTAssertFalse(unknown.contains(wrong), "a token in the log: \(unknown)")

        let session = "Zm9yZ2VkLXNlc3Npb24tdG9rZW4tb2YtNDMtY2hhcnNYWlo"
        _ = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/private/subscriptions/list?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(session)")
        let required = try XCTUnwrap(line(f, containing: "subscriptions/list 421"))
        XCTAssertTrue(required.contains("AUTHENTICATION_REQUIRED: "), required)
        XCTAssertFalse(required.contains(session) || required.contains(f.apiToken), "a secret in the log: \(required)")

        // A push token is the capability of its webcourierURL: asked for in another container,
        // the refusal names it, and the log does not.
        let made = try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/create?ckAPIToken=\(f.apiToken)", json: #"{"apnsEnvironment":"development"}"#)
        let apns = try XCTUnwrap(made["apnsToken"] as? String, made.text)
        XCTAssertEqual(try f.client().request("GET", "/webcourier/iCloud.com.example.other/development/\(apns)").status, 404)
        let courier = try XCTUnwrap(line(f, containing: "/webcourier/"))
        XCTAssertTrue(courier.contains("NOT_FOUND: no push token '…'"), courier)
        XCTAssertFalse(courier.contains(apns), "a push token in the log: \(courier)")

        // Engine refusals too: a body over the limit.
        let c = try RawHTTPClient(port: f.port)
        XCTAssertTrue(c.send("POST \(f.path("private", "records/query")) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3000000\r\n\r\n"))
        XCTAssertEqual(c.readResponse()?.status, 413)
        let tooLarge = try XCTUnwrap(line(f, containing: "records/query 413"))
        XCTAssertTrue(tooLarge.contains("LIMIT_EXCEEDED: the request body is larger than"), tooLarge)
        XCTAssertFalse(f.log.lines.contains { $0.contains(f.session) || $0.contains(f.apiToken) })
    }

    func testTheLogNamesAnOriginCORSRefusesAndTheOptionThatWouldAllowIt() throws {
        let f = try ServeFixture()
        let answer = try f.client().request("GET", f.path("private", "zones/list"), headers: [("Origin", "https://app.example")])
        XCTAssertNil(answer.header("Access-Control-Allow-Origin"))
        let refused = try XCTUnwrap(line(f, containing: "zones/list 200"))
        XCTAssertTrue(refused.contains("CORS: origin 'https://app.example' is not allowed (allowed: http://localhost:*, http://127.0.0.1:*)"), refused)
        XCTAssertTrue(refused.contains("--allow-origin https://app.example"), refused)
        _ = try f.client().request("OPTIONS", f.path("private", "records/query"), headers: [("Origin", "http://evil.example:8000"), ("Access-Control-Request-Headers", "content-type")])
        let preflight = try XCTUnwrap(line(f, containing: "OPTIONS "))
        XCTAssertTrue(preflight.contains("--allow-origin http://evil.example:8000"), preflight)
        // An allowed page, and the server's own (its sign-in form), say nothing of CORS.
        _ = try f.client().request("GET", f.path("private", "users/caller"), headers: [("Origin", "http://localhost:3000")])
        XCTAssertFalse(try XCTUnwrap(line(f, containing: "users/caller")).contains("CORS"))
        _ = try f.client().request("GET", "/signin/\(ServeFixture.container)/development", headers: [("Origin", f.url)])
        XCTAssertFalse(try XCTUnwrap(line(f, containing: "/signin/")).contains("CORS"))
    }

    /// A page opened from a file (origin `null`) or a browser extension cannot be allowed by
    /// `--allow-origin ORIGIN`, which takes http(s) origins only: the log says what to do
    /// instead, not an option the server would refuse.
    func testTheLogSaysHowToServeAPageWhoseOriginNoOptionAllows() throws {
        let f = try ServeFixture()
        _ = try f.client().request("GET", f.path("private", "zones/list"), headers: [("Origin", "null")])
        let null = try XCTUnwrap(line(f, containing: "zones/list 200"))
        XCTAssertTrue(null.contains("CORS: origin 'null' is not allowed"), null)
        XCTAssertFalse(null.contains("--allow-origin null"), null)
        XCTAssertTrue(null.contains("a page opened from a file"), null)
        XCTAssertTrue(null.contains("serve the page over http from an allowed origin (python3 -m http.server 8000, then http://localhost:8000)"), null)
        _ = try f.client().request("GET", f.path("private", "users/caller"), headers: [("Origin", "chrome-extension://abcdef")])
        let other = try XCTUnwrap(line(f, containing: "users/caller 200"))
        XCTAssertFalse(other.contains("--allow-origin chrome-extension"), other)
        XCTAssertTrue(other.contains("only --allow-origin '*' allows it"), other)
    }

    /// A query refused for an index or a record type the schema lacks answers CloudKit's words,
    /// nothing more; the log adds what the server's user does about it, with the command that
    /// addresses this server's data directory and the request's container.
    func testTheLogSaysWhichIndexOrRecordTypeARefusedQueryNeeds() throws {
        let f = try ServeFixture()
        XCTAssertEqual(try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Note","fields":{"n":{"value":1}}}}]}"#).status, 200)
        let unindexed = try f.post("private", "records/query", #"{"query":{"recordType":"Note"}}"#)
        XCTAssertEqual(unindexed.status, 400)
        XCTAssertEqual((unindexed.json as? [String: Any])?["reason"] as? String, "Field 'recordName' is not marked queryable", "the wire keeps CloudKit's words")
        let index = try XCTUnwrap(line(f, containing: "records/query 400"))
        XCTAssertTrue(index.contains("BAD_REQUEST: Field 'recordName' is not marked queryable; add the index: ck --data-dir \(f.root) --container \(ServeFixture.container) schema index add Note ___recordID QUERYABLE (in the .ckdb of record type Note: \"___recordID\" REFERENCE QUERYABLE)"), index)

        _ = try f.post("private", "records/query", #"{"query":{"recordType":"Nothing"}}"#)
        let type = try XCTUnwrap(line(f, containing: "Did not find record type: Nothing"))
        XCTAssertTrue(type.contains("; a record type exists once a record of it is saved in development, or a schema defines it: ck --data-dir \(f.root) --container \(ServeFixture.container) schema import FILE"), type)
    }
}
