import CKCore
import CKCrypto
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe
@testable import CKStore

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

    static func publicKey() throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent("server-key-public.pem"), encoding: .utf8)
    }

    /// A server whose clock reads the signed requests' date plus `after` ms (30 s: inside the
    /// signature window), the requests, and — when `registered` — their key added by the
    /// device's account (alice).
    func served(after: Int64 = 30_000, registered: Bool) throws -> (f: ServeFixture, keyID: String, requests: [Signed]) {
        let (keyID, requests) = try signedRequests()
        let date = try XCTUnwrap(ISO8601DateFormatter().date(from: requests[0].date))
        let ms = Int64(date.timeIntervalSince1970 * 1000) + after
        let f = try ServeFixture(clock: Clock { ms }, container: "iCloud.com.example.test")
        if registered { try register(f, keyID) }
        return (f, keyID, requests)
    }

    /// `ck server-key add` of the fixtures' key, as the device's account.
    @discardableResult
    func register(_ f: ServeFixture, _ keyID: String) throws -> DocumentBody {
        try f.api.addServerKey(keyID: keyID, publicKeyPEM: try Self.publicKey(), container: "iCloud.com.example.test", environment: .development,
                               as: Caller(container: "iCloud.com.example.test"))
    }

    func send(_ f: ServeFixture, _ r: Signed, keyID: String, signature: String? = nil, body: String? = nil) throws -> HTTPTestClient.Answer {
        let b = body ?? r.body
        return try f.client().request(b.isEmpty ? "GET" : "POST", r.target, body: b.isEmpty ? nil : Array(b.utf8), headers: [
            ("X-Apple-CloudKit-Request-KeyID", keyID), ("X-Apple-CloudKit-Request-ISO8601Date", r.date),
            ("X-Apple-CloudKit-Request-SignatureV1", signature ?? r.signature),
        ])
    }

    func testASignedRequestReadsThePublicDatabaseOnlyAndAForgedOneIsRefused() throws {
        let (f, keyID, requests) = try served(registered: true)
        // The signed query has no filter: the schema has the index it needs.
        try f.api.defineQueryableType("Items", container: "iCloud.com.example.test")

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

    /// A request signed here by `P256PrivateKey`, as ck's own client signs them, under a key
    /// registered from that key's `publicKey.pem`; the same request signed by another key is 401.
    func testARequestSignedByP256PrivateKeyIsAcceptedAndAnotherKeysIsNot() throws {
        let container = "iCloud.com.example.test"
        let f = try ServeFixture(container: container)
        let key = try P256PrivateKey.generate(), other = try P256PrivateKey.generate()
        let keyID = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
        _ = try f.api.addServerKey(keyID: keyID, publicKeyPEM: key.publicKey.pem, container: container, environment: .development,
                                   as: Caller(container: container))
        try f.api.defineQueryableType("Items", container: container)
        let date = ISO8601DateFormatter().string(from: Date())
        let body = #"{"zoneID":{"zoneName":"_defaultZone"},"query":{"recordType":"Items"}}"#
        let target = "/database/1/\(container)/development/public/records/query?ckjsVersion=2.6.4"
        func signatureV1(_ signer: P256PrivateKey) -> String {
            let signed = date + ":" + Data(SHA256.digest(Array(body.utf8))).base64EncodedString() + ":" + target
            return Data(signer.signature(for: Array(signed.utf8)).der).base64EncodedString()
        }
        let request = Signed(body: body, date: date, signature: signatureV1(key), target: target)

        let accepted = try send(f, request, keyID: keyID)
        XCTAssertEqual(accepted.status, 200, accepted.text)
        XCTAssertNotNil((accepted.json as? [String: Any])?["records"] as? [Any], accepted.text)
        let refused = try send(f, request, keyID: keyID, signature: signatureV1(other))
        XCTAssertEqual(refused.status, 401, refused.text)
        XCTAssertEqual((refused.json as? [String: Any])?["serverErrorCode"] as? String, "AUTHENTICATION_FAILED")
    }

    func testASignedRequestOutsideTheClockWindowIsRefused() throws {
        let (f, keyID, requests) = try served(after: 10 * 60_000, registered: true)
        XCTAssertEqual(try send(f, requests[0], keyID: keyID).status, 401)
    }

    /// CloudKit JS's setUpAuth under a key is a signed users/caller: it answers the user who
    /// registered the key, whose saves the key's are; the other users/* endpoints are 403 with
    /// no sign-in page to go to.
    func testAKeyActsAsTheUserWhoRegisteredIt() throws {
        let (f, keyID, requests) = try served(registered: false)
        let alice = try XCTUnwrap(try register(f, keyID).document["userRecordName"]?.stringValue)
        func request(_ endpoint: String) throws -> Signed { try XCTUnwrap(requests.first { $0.target.contains("/public/\(endpoint)?") }, endpoint) }

        let me = try send(f, try request("users/caller"), keyID: keyID)
        XCTAssertEqual(me.status, 200, me.text)
        XCTAssertEqual((me.json as? [String: Any])?["userRecordName"] as? String, alice)
        let saved = try send(f, try request("records/modify"), keyID: keyID)
        XCTAssertEqual(saved.status, 200, saved.text)
        let record = ((saved.json as? [String: Any])?["records"] as? [[String: Any]])?.first
        XCTAssertEqual((record?["created"] as? [String: Any])?["userRecordName"] as? String, alice, saved.text)
        XCTAssertEqual((record?["modified"] as? [String: Any])?["userRecordName"] as? String, alice)
        for endpoint in ["users/discover", "users/lookup/email"] {
            let refused = try send(f, try request(endpoint), keyID: keyID)
            XCTAssertEqual(refused.status, 403, refused.text)
            let o = refused.json as? [String: Any]
            XCTAssertEqual(o?["serverErrorCode"] as? String, "ACCESS_DENIED")
            XCTAssertNil(o?["redirectURL"], "a key has no sign-in page to go to")
        }
    }

    /// A key an older ck registered has no user: it reads the public database, and what needs a
    /// user is 403 saying how to register it again.
    func testAnOlderStoresKeyWithoutAUserIsToldHowToMendIt() throws {
        let (f, keyID, requests) = try served(registered: false)
        let pem = try Self.publicKey()
        let dir = f.root + "/containers/iCloud.com.example.test/development"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let keys: [String: Any] = ["schemaVersion": 1, "keys": [["keyID": keyID, "publicKey": pem, "created": 1]]]
        try JSONSerialization.data(withJSONObject: keys).write(to: URL(fileURLWithPath: dir + "/server-keys.json"))
        try f.api.defineQueryableType("Items", container: "iCloud.com.example.test")
        XCTAssertEqual(try send(f, requests[0], keyID: keyID).status, 200, "records/query reads the public database")
        for r in requests where r.target.contains("/public/users/caller?") || r.target.contains("/public/records/modify?") {
            let refused = try send(f, r, keyID: keyID)
            XCTAssertEqual(refused.status, 403, refused.text)
            let reason = (refused.json as? [String: Any])?["reason"] as? String ?? ""
            XCTAssertTrue(reason.contains("has no user") && reason.contains("ck server-key add"), reason)
            XCTAssertNil((refused.json as? [String: Any])?["redirectURL"])
        }
    }
}
