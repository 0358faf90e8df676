import CKCore
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// Requests signed with a server-to-server key, over HTTP: the requests of
/// Tests/Fixtures/auth/signed-requests.json, signed once with openssl, sent as recorded (the
/// server's clock set to their date).
final class ServerToServerTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/auth")

    struct Signed { let body: String, date: String, signature: String, target: String }

    func signedRequests() throws -> (keyID: String, requests: [Signed]) {
        let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent("signed-requests.json"))) as? [String: Any])
        let list = try XCTUnwrap(o["requests"] as? [[String: String]])
        return (try XCTUnwrap(o["keyID"] as? String), list.map { Signed(body: $0["body"]!, date: $0["date"]!, signature: $0["signatureV1"]!, target: $0["target"]!) })
    }

    func send(_ f: ServeFixture, _ r: Signed, keyID: String, signature: String? = nil, body: String? = nil) throws -> HTTPTestClient.Answer {
        let b = body ?? r.body
        return try f.client().request(b.isEmpty ? "GET" : "POST", r.target, body: b.isEmpty ? nil : Array(b.utf8), headers: [
            ("X-Apple-CloudKit-Request-KeyID", keyID), ("X-Apple-CloudKit-Request-ISO8601Date", r.date),
            ("X-Apple-CloudKit-Request-SignatureV1", signature ?? r.signature),
        ])
    }

    func testASignedRequestReadsThePublicDatabaseOnlyAndAForgedOneIsRefused() throws {
        let (keyID, requests) = try signedRequests()
        let date = try XCTUnwrap(ISO8601DateFormatter().date(from: requests[0].date))
        let ms = Int64(date.timeIntervalSince1970 * 1000) + 30_000
        let f = try ServeFixture(clock: Clock { ms }, container: "iCloud.com.example.test")
        let pem = try String(contentsOf: Self.fixtures.appendingPathComponent("server-key-public.pem"), encoding: .utf8)
        _ = try f.api.addServerKey(keyID: keyID, publicKeyPEM: pem, container: "iCloud.com.example.test", environment: .development)
        // The signed query has no filter: the schema has the index it needs.
        try f.defineQueryableType("Items", container: "iCloud.com.example.test")

        let query = try send(f, requests[0], keyID: keyID)
        XCTAssertEqual(query.status, 200, query.text)
        XCTAssertNotNil((query.json as? [String: Any])?["records"] as? [Any])
        let privateLookup = try send(f, requests[2], keyID: keyID)
        XCTAssertEqual(privateLookup.status, 403, privateLookup.text)
        XCTAssertEqual((privateLookup.json as? [String: Any])?["serverErrorCode"] as? String, "ACCESS_DENIED")

        // Another body, another key ID, a signature of another request: 401.
        for a in [try send(f, requests[0], keyID: keyID, body: #"{"query":{"recordType":"Other"}}"#),
                  try send(f, requests[0], keyID: "unknown-key", signature: nil),
                  try send(f, requests[0], keyID: keyID, signature: requests[1].signature)] {
            XCTAssertEqual(a.status, 401, a.text)
            XCTAssertEqual((a.json as? [String: Any])?["serverErrorCode"] as? String, "AUTHENTICATION_FAILED")
        }
    }

    func testASignedRequestOutsideTheClockWindowIsRefused() throws {
        let (keyID, requests) = try signedRequests()
        let date = try XCTUnwrap(ISO8601DateFormatter().date(from: requests[0].date))
        let ms = Int64(date.timeIntervalSince1970 * 1000) + 10 * 60_000
        let f = try ServeFixture(clock: Clock { ms }, container: "iCloud.com.example.test")
        let pem = try String(contentsOf: Self.fixtures.appendingPathComponent("server-key-public.pem"), encoding: .utf8)
        _ = try f.api.addServerKey(keyID: keyID, publicKeyPEM: pem, container: "iCloud.com.example.test", environment: .development)
        XCTAssertEqual(try send(f, requests[0], keyID: keyID).status, 401)
    }
}
