import CKCore
import CKCrypto
import CKHTTP
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// What a hostile or careless client tried against ck serve (a review that attacked it), each a
/// test that failed while the hole was open: a sign-in forged by another site, a forged upload
/// URL read into memory, a receipt of another container, an asset claimed by its checksum, a
/// file:// downloadURL read for a web client, a trickled body, refusals without CORS.
final class AttackTests: XCTestCase {
    private func object(_ a: HTTPTestClient.Answer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(a.body))) as? [String: Any] ?? [:]
    }

    private func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }

    /// A page on another site auto-submits a form into a window it opened: were the sign-in
    /// page to sign alice in, it would post the session to the opener (targetOrigin "*"), the
    /// hostile page.
    func testACrossSitePostToTheSignInPageHandsNoSessionToThatSite() throws {
        let f = try ServeFixture()
        let posted = try f.client().request("POST", "/signin/\(ServeFixture.container)/development",
                                            body: Array("appleID=alice%40example.com&keepSignedIn=true".utf8),
                                            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "https://evil.example"),
                                                      ("Sec-Fetch-Site", "cross-site")])
        XCTAssertFalse(posted.text.contains("ckSession"), "a cross-site POST got a session: \(posted.text)")
        XCTAssertNotEqual(posted.status, 200, posted.text)
    }

    /// A page of another site fetching the sign-in page's JSON answer cannot read it, but each
    /// fetch made a session: any site the user visited could pile up sessions (2,000 of them
    /// made every sign-in and token rotation take 0.3 s, each scanning them all). Refused, and
    /// none made; an allowed page and a script (no Origin) still sign in.
    func testAPageOfAnotherSiteMakesNoSessionThroughTheJSONSignIn() throws {
        let f = try ServeFixture()
        let signIn = "/signin/\(ServeFixture.container)/development"
        let sessions = { try f.api.listWebSessions(as: Caller(container: ServeFixture.container)).document["sessions"]?.arrayValue?.count ?? 0 }
        let before = try sessions()
        let foreign = try f.client().request("GET", signIn, headers: [("Accept", "application/json"), ("Origin", "https://evil.example")])
        XCTAssertFalse(foreign.text.contains("ckSession"), foreign.text)
        XCTAssertEqual(foreign.status, 403, foreign.text)
        XCTAssertEqual(try sessions(), before, "a page of another site made a session")
        let allowed = try f.client().request("GET", signIn, headers: [("Accept", "application/json"), ("Origin", "http://localhost:3000")])
        XCTAssertTrue(allowed.text.contains("ckSession"), allowed.text)
        let script = try f.client().request("GET", signIn, headers: [("Accept", "application/json")])
        XCTAssertTrue(script.text.contains("ckSession"), script.text)
    }

    /// A capability URL sent with a slip — a trailing slash, a segment too many — is refused
    /// (404), and its token, still good, is not written to the log: an upload token lets anyone
    /// upload once, a push token reads its user's notifications.
    func testAMistypedCapabilityURLKeepsItsTokenOutOfTheLog() throws {
        let f = try ServeFixture()
        let urls = try f.post("private", "assets/upload", #"{"tokens":[{"fieldName":"file","recordType":"Doc"}]}"#)
        let upload = try XCTUnwrap((object(urls)["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let push = try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/create?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(enc(f.session))",
                                          json: #"{"apnsEnvironment":"development"}"#)
        let courier = try XCTUnwrap(object(push)["webcourierURL"] as? String)
        let secrets = [String(upload.split(separator: "/").last!), String(courier.split(separator: "/").last!)]
        for target in [upload + "/", upload + "/x", courier + "/", courier + "/x"] {
            let answer = try f.client().request("POST", String(target.dropFirst(f.url.count)), body: Array("x".utf8))
            XCTAssertEqual(answer.status, 404, target)
        }
        for line in f.log.lines {
            for s in secrets { XCTAssertFalse(line.contains(s), "the log holds a token: \(line)") }
        }
    }

    /// An upload URL that this data directory never sealed is refused before its body is read
    /// (16 forged 50 MB uploads once took the server to 1.1 GB resident).
    func testAForgedUploadURLIsRefusedBeforeItsBodyIsRead() throws {
        let root = NSTemporaryDirectory() + "ck-attack-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let api = CloudKitAPI(dataDirectory: root, serverURL: "http://127.0.0.1:1")
        _ = try api.signIn(SignInRequest(appleID: "alice@example.com"), as: Caller(container: ServeFixture.container))
        let h = WebServicesHandler(api: api, allowedOrigins: [], hostNames: ["127.0.0.1"], log: { _ in })
        let head = HTTPRequestHead(method: "POST", target: "/upload/ck1u.forged.token",
                                   headers: HTTPHeaders([("Host", "127.0.0.1"), ("Content-Length", "50000000")]))
        switch h.admit(head) {
        case .readBody(let max, _), .streamBody(let max, _, _): XCTFail("a forged upload URL is admitted with a body of up to \(max) bytes")
        case .answer(let r): XCTAssertEqual(r.status, 401)
        }
    }

    /// The URLs that take no credential in their head and no body — a long-poll, an asset's
    /// downloadURL, the config script — read no 2 MB body either: 250 anonymous connections each
    /// holding 1.9 MB of a body to a webcourier URL took the server to 0.5 GB resident.
    func testURLsThatTakeNoBodyReadNoLargeOne() throws {
        let root = NSTemporaryDirectory() + "ck-attack-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let api = CloudKitAPI(dataDirectory: root, serverURL: "http://127.0.0.1:1")
        let h = WebServicesHandler(api: api, allowedOrigins: [], hostNames: ["127.0.0.1"], log: { _ in })
        let hex = String(repeating: "ab", count: 32)
        for (method, target) in [("POST", "/webcourier/\(ServeFixture.container)/development/0123456789abcdef0123456789abcdef"),
                                 ("GET", "/webcourier/\(ServeFixture.container)/development/0123456789abcdef0123456789abcdef"),
                                 ("GET", "/assets/ab/\(hex)"), ("GET", "/ck/cloudkit-config.js")] {
            let head = HTTPRequestHead(method: method, target: target, headers: HTTPHeaders([("Host", "127.0.0.1"), ("Content-Length", "1900000")]))
            switch h.admit(head) {
            case .readBody(let max, _), .streamBody(let max, _, _):
                XCTAssertLessThanOrEqual(max, 64 * 1024, "\(method) \(target) is admitted with an anonymous body of up to \(max) bytes")
            case .answer: break
            }
        }
    }

    /// A receipt names its container: records/modify in another container refuses it.
    func testAReceiptOfOneContainerIsNotTakenInAnother() throws {
        let f = try ServeFixture()
        let other = "iCloud.com.example.other"
        let otherToken = try XCTUnwrapString(f.api.createAPIToken(name: "o", container: other, environment: .development).document["apiToken"])
        let otherSession = try XCTUnwrapString(f.api.createWebAuthToken(as: Caller(container: other), keepSignedIn: false).document["ckWebAuthToken"])
        let single = try upload(f, "bytes of container one")
        let body = #"{"operations":[{"operationType":"create","record":{"recordType":"Doc","recordName":"d1","fields":{"file":{"value":\#(single)}}}}]}"#
        let saved = try f.client().request("POST", "/database/1/\(other)/development/private/records/modify?ckAPIToken=\(otherToken)&ckWebAuthToken=\(enc(otherSession))", json: body)
        let first = (object(saved)["records"] as? [[String: Any]])?.first
        XCTAssertNotNil(first?["serverErrorCode"], "a receipt of \(ServeFixture.container) saved in \(other): \(saved.text)")
    }

    /// Another user may not attach a stored asset to their own record by its checksum and size
    /// alone (no receipt), nor learn from the answer whether such bytes are stored.
    func testAnotherUserCannotClaimAStoredAssetByItsChecksum() throws {
        let f = try ServeFixture()
        let single = try upload(f, "alice's private bytes")
        let sum = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(single.utf8)) as? [String: Any])?["fileChecksum"] as? String)
        // bob signs in on the device (alice's sessions end); alice gets a new one with --as.
        _ = try f.api.signIn(SignInRequest(appleID: "bob@example.com"), as: Caller(container: ServeFixture.container))
        let bob = try XCTUnwrapString(f.api.createWebAuthToken(as: Caller(container: ServeFixture.container), keepSignedIn: false).document["ckWebAuthToken"])
        let body = #"{"operations":[{"operationType":"create","record":{"recordType":"Doc","recordName":"b1","fields":{"file":{"value":{"fileChecksum":"\#(sum)","size":21}}}}}]}"#
        let saved = try f.client().request("POST", "/database/1/\(ServeFixture.container)/development/private/records/modify?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(enc(bob))", json: body)
        let first = (object(saved)["records"] as? [[String: Any]])?.first
        XCTAssertNotNil(first?["serverErrorCode"], "bob attached alice's asset by checksum: \(saved.text)")
        let unknown = Data(SHA256.digest(Array("never stored".utf8))).base64EncodedString()
        let other = try f.client().request("POST", "/database/1/\(ServeFixture.container)/development/private/records/modify?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(enc(bob))",
                                           json: body.replacingOccurrences(of: sum, with: unknown).replacingOccurrences(of: "b1", with: "b2"))
        let otherReason = (object(other)["records"] as? [[String: Any]])?.first?["reason"] as? String
        XCTAssertEqual(first?["reason"] as? String, otherReason, "a stored and an unknown checksum are refused alike")
    }

    /// A web client's records/modify may not make the server read a file outside its data
    /// directory through a file:// downloadURL (the CLI's `ck import` path).
    func testAFileDownloadURLIsNotReadOverHTTP() throws {
        let f = try ServeFixture()
        let elsewhere = NSTemporaryDirectory() + "ck-attack-other-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let bytes = Array("another project's asset".utf8)
        let hex = SHA256.hex(bytes)
        try FileManager.default.createDirectory(atPath: elsewhere + "/assets/" + hex.prefix(2), withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: elsewhere + "/assets/" + hex.prefix(2) + "/" + hex))
        let sum = Data(SHA256.digest(bytes)).base64EncodedString()
        let value = #"{"fileChecksum":"\#(sum)","size":\#(bytes.count),"downloadURL":"file://\#(elsewhere)/assets/\#(hex.prefix(2))/\#(hex)"}"#
        let saved = try f.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Doc","recordName":"f1","fields":{"file":{"value":\#(value)}}}}]}"#)
        let first = (object(saved)["records"] as? [[String: Any]])?.first
        XCTAssertNotNil(first?["serverErrorCode"], "the server read \(elsewhere) for a web client: \(saved.text)")
    }

    /// A page of an allowed origin reads every refusal whose request head was read, those
    /// answered before the body (an unknown path, a body over the limit) included.
    func testRefusalsBeforeTheBodyCarryCORSForAllowedOrigins() throws {
        let f = try ServeFixture()
        let origin = [("Origin", "http://localhost:3000")]
        let unknown = try f.client().request("GET", "/database/1/\(ServeFixture.container)/development/private/nosuch?ckAPIToken=\(f.apiToken)", headers: origin)
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(unknown.header("Access-Control-Allow-Origin"), "http://localhost:3000", "404 of an unknown path")
        let big = try f.client().request("POST", f.path("private", "records/modify"), body: [UInt8](repeating: 0x20, count: 2_000_001), headers: origin)
        XCTAssertEqual(big.status, 413)
        XCTAssertEqual(big.header("Access-Control-Allow-Origin"), "http://localhost:3000", "413 of a body over the limit")
    }

    private func upload(_ f: ServeFixture, _ text: String) throws -> String {
        let urls = try f.post("private", "assets/upload", #"{"tokens":[{"fieldName":"file","recordType":"Doc"}]}"#)
        let url = try XCTUnwrap((object(urls)["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let up = try f.client().request("POST", String(url.dropFirst(f.url.count)), body: Array(text.utf8))
        let single = try XCTUnwrap(object(up)["singleFile"] as? [String: Any])
        return String(decoding: try JSONSerialization.data(withJSONObject: single), as: UTF8.self)
    }
}
