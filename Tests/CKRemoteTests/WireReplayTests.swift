import CKCore
import CKHTTP
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKRemote

/// Traffic recorded from Apple's servers by public projects (Tests/Fixtures/wire) replayed
/// through the client: the answers it decodes are Apple's, not ck serve's.
final class WireReplayTests: XCTestCase {
    /// A stream that answers each request with the next canned response, and keeps the requests.
    final class ScriptedStream: HTTPByteStream {
        var answers: [(status: Int, body: [UInt8])]
        var pending: [UInt8] = []
        var requests: [String] = []
        init(_ answers: [(Int, [UInt8])]) { self.answers = answers.map { (status: $0.0, body: $0.1) } }
        func write(_ bytes: [UInt8]) throws {
            let head = String(decoding: bytes, as: UTF8.self)
            if head.hasPrefix("GET ") || head.hasPrefix("POST ") {
                requests.append(String(head.prefix { $0 != "\r" }))
                guard !answers.isEmpty else { throw HTTPClientError(.closed, "no more answers scripted") }
                let a = answers.removeFirst()
                pending += Array("HTTP/1.1 \(a.status) X\r\nContent-Type: application/json\r\nContent-Length: \(a.body.count)\r\n\r\n".utf8) + a.body
            }
        }
        func read(maxCount: Int, timeout: Double) throws -> [UInt8] {
            let n = min(maxCount, pending.count)
            defer { pending.removeFirst(n) }
            return Array(pending.prefix(n))
        }
        func close() {}
    }

    func body(_ name: String) -> [UInt8] {
        let f = WireFixture(String(name.dropLast(5)))
        return Array(try! JSONSerialization.data(withJSONObject: f.body))
    }

    func client(_ f: RemoteFixture, _ stream: ScriptedStream, credentials: Credentials = Credentials(apiToken: "t", webAuthToken: "w")) -> WebServicesClient {
        WebServicesClient(remote: f.remote, credentials: credentials, store: nil, http: HTTPClient(connect: { stream }, host: "api.apple-cloudkit.com"),
                          pacer: Pacer(PacingPolicy(rate: nil, maxWait: 0, retries: 0)), notice: { _ in })
    }

    func testApplesChangeFeedAnswersAreFetchedAndMerged() throws {
        let f = try RemoteFixture()
        // The recorded database feed names two zones; the second's answer is made here.
        let custom = Array(#"{"zones":[{"zoneID":{"zoneName":"CustomZone"},"records":[],"syncToken":"S1","moreComing":false}]}"#.utf8)
        let stream = ScriptedStream([(200, body("changes-database.response.photos.json")), (200, body("changes-zone.response.photos-tombstone.json")), (200, custom)])
        let c = client(f, stream)
        let r = try RemotePull(fetch: f.fetch(c)).run()
        XCTAssertEqual(stream.requests.map { $0.components(separatedBy: " ")[1].components(separatedBy: "?")[0].components(separatedBy: "/").suffix(2).joined(separator: "/") },
                       ["changes/database", "changes/zone", "changes/zone"])
        XCTAssertEqual(r.fetch.zones.map(\.zoneName), ["PrimarySync", "CustomZone"])
        XCTAssertEqual(r.fetch.records, 1)
        XCTAssertEqual(r.fetch.deletions, 1, "a tombstone {recordName, deleted: true} is a deletion")
        let merge = try XCTUnwrap(r.merges.first { $0.zone.zoneName == "PrimarySync" }?.report)
        XCTAssertTrue(merge.failures.isEmpty, "Apple's records load as they are: \(merge.failures)")
        XCTAssertEqual(merge.saved.count, 1)
        let summary = try f.localAPI.remoteTracking(RemoteZone(remote: "origin", zoneName: "PrimarySync"), as: f.localCaller())
        XCTAssertNotNil(summary.syncToken)
        XCTAssertTrue(summary.complete)
    }

    func testApplesErrorsKeepTheirCodeAndNameTheRemote() throws {
        let f = try RemoteFixture()
        let denied = ScriptedStream([(401, body("error.response.authentication-failed.json"))])
        XCTAssertThrowsError(try client(f, denied).call(.public, "records/modify", body: .object([:]))) { e in
            let ck = e as? CloudKitError
            XCTAssertEqual(ck?.code, .authenticationFailed)
            XCTAssertTrue(ck?.reason.hasPrefix("remote 'origin', records/modify: ") == true, ck?.reason ?? "")
        }
        let required = ScriptedStream([(421, body("error.response.apple-doc-authentication-required.json"))])
        let c = client(f, required, credentials: Credentials(apiToken: "t"))
        XCTAssertThrowsError(try c.call(.public, "users/caller")) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .authenticationRequired)
        }
        XCTAssertNotNil(c.redirectURL, "the 421's redirectURL is where a sign-in goes")
        let notQueryable = ScriptedStream([(400, body("error.response.query-field-not-queryable.json"))])
        var fetch = f.fetch(client(f, notQueryable, credentials: Credentials(apiToken: "t")), .public, types: ["Feed"])
        fetch.zones = []
        XCTAssertThrowsError(try fetch.run()) { e in
            XCTAssertTrue((e as? CloudKitError)?.reason.contains(#""___recordID" REFERENCE QUERYABLE"#) == true, "\(e)")
        }
    }

    func testAskedForWaitsAreBoundedAndAWriteIsNeverSentTwiceAfterA5xx() throws {
        let f = try RemoteFixture()
        let zero = Array(#"{"serverErrorCode":"THROTTLED","reason":"slow down","retryAfter":0}"#.utf8)
        let throttled = ScriptedStream(Array(repeating: (429, zero), count: 50))
        let c = WebServicesClient(remote: f.remote, credentials: Credentials(apiToken: "t", webAuthToken: "w"), store: nil,
                                  http: HTTPClient(connect: { throttled }, host: "h"),
                                  pacer: Pacer(PacingPolicy(rate: nil, maxWait: 1000, retries: 2), sleep: { _ in }, now: { 0 }), notice: { _ in })
        XCTAssertThrowsError(try c.call(.private, "zones/list")) { e in XCTAssertEqual((e as? CloudKitError)?.code, .throttled) }
        XCTAssertLessThanOrEqual(throttled.requests.count, 9, "a retryAfter of 0 does not spin")
        XCTAssertGreaterThan(c.waited, 0, "and is waited as the backoff at least")

        let failing = ScriptedStream(Array(repeating: (500, Array(#"{"serverErrorCode":"INTERNAL_ERROR","reason":"oops"}"#.utf8)), count: 5))
        let w = client(f, failing)
        XCTAssertThrowsError(try w.call(.private, "records/modify", body: .object(["operations": .array([])]))) { e in
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("may have been applied") == true, "\(e)")
        }
        XCTAssertEqual(failing.requests.count, 1, "a write that may have been applied is not sent again")
    }
}
