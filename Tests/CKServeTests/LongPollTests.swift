import CKCore
import CKModel
import CKTestSupport
import Foundation
import Glibc
import XCTest
@testable import CKServe

/// Long-polls of the web courier (issue 35, item 1). A poll ends when its client hangs up; the
/// polls of one push token, of one API token and of the whole server are capped, and one over
/// a cap is answered at once; a waiting poll costs no CPU, and a notification — written by
/// this server or by anyone else — wakes it.
final class LongPollTests: XCTestCase {
    private func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }

    /// A push token of alice's made over HTTP with the fixture's API token: its courier path.
    private func courier(_ f: ServeFixture) throws -> String {
        let made = try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/create?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(enc(f.session))",
                                          json: #"{"apnsEnvironment":"development"}"#)
        XCTAssertEqual(made.status, 200, made.text)
        let url = try XCTUnwrap(made["webcourierURL"] as? String)
        return String(url.dropFirst(f.url.count))
    }

    /// A poll sent and left waiting.
    private func openPoll(_ f: ServeFixture, _ path: String) throws -> RawHTTPClient {
        let c = try RawHTTPClient(port: f.port, timeout: 10)
        XCTAssertTrue(c.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(f.port)\r\n\r\n"))
        return c
    }

    /// Seconds of CPU this process has used.
    private func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    private func polls(_ f: ServeFixture) -> [String] { f.log.lines.filter { $0.contains("/webcourier/") } }

    /// 256 polls opened and dropped — the attack that held every connection for 30 s, and
    /// re-read the store four times a second for each — leave the server free at once.
    func testDroppedPollsEndAtOnceAndOrdinaryRequestsAreServed() throws {
        let f = try ServeFixture(pollSeconds: 30)
        let couriers = try (0..<8).map { _ in try courier(f) }
        var clients = try (0..<256).map { try openPoll(f, couriers[$0 % couriers.count]) }
        // Polls over a cap are answered at once; the others wait.
        let deadline = Date().addingTimeInterval(10)
        while polls(f).count < 256 - 16, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(polls(f).count, 256 - 16, "all but 2 polls of each of the 8 push tokens answered at once")
        XCTAssertTrue(polls(f).allSatisfy { $0.contains(" 429 ") && $0.contains("THROTTLED") }, polls(f).first ?? "")
        clients.removeAll()  // every socket closed

        let started = Date()
        let answer = try f.get("private", "zones/list")
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(answer.status, 200, answer.text)
        XCTAssertLessThan(took, 0.1, "an ordinary request after the polls were dropped")
        // The waiting ones ended with their clients, not 30 s later.
        while polls(f).count < 256, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(polls(f).count, 256)
        XCTAssertEqual(polls(f).filter { $0.contains("went away") }.count, 16, polls(f).suffix(16).joined(separator: "\n"))
    }

    /// Polls at their caps wait in poll(2): the process spends next to no CPU meanwhile.
    func testWaitingPollsCostNoCPU() throws {
        let f = try ServeFixture(pollSeconds: 30)
        let couriers = try (0..<16).map { _ in try courier(f) }
        let clients = try (0..<32).map { try openPoll(f, couriers[$0 % couriers.count]) }
        usleep(300_000)
        XCTAssertEqual(polls(f), [], "32 polls wait: the cap of one API token's push tokens")
        let before = cpuSeconds()
        usleep(2_000_000)
        let spent = cpuSeconds() - before
        XCTAssertLessThan(spent, 0.1, "CPU seconds spent over 2 s while 32 polls waited")
        XCTAssertEqual(clients.count, 32)
        // One more of the same API token is over its cap: answered at once, to retry later.
        let more = try f.client().request("GET", try courier(f))
        XCTAssertEqual(more.status, 429, more.text)
        XCTAssertEqual(more["serverErrorCode"] as? String, "THROTTLED")
        XCTAssertEqual(more.header("Retry-After"), "1")
    }

    /// A notification delivered by another writer — another API object on the data
    /// directory, as the CLI is another process — wakes a waiting poll at once, not when its
    /// time is up.
    func testAnotherWritersNotificationWakesAWaitingPoll() throws {
        let f = try ServeFixture(pollSeconds: 20)
        let path = try courier(f)
        XCTAssertEqual(try f.post("private", "subscriptions/modify", #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"items","subscriptionType":"query","query":{"recordType":"Item"},"firesOn":["create"]}}]}"#).status, 200)
        let client = try openPoll(f, path)
        usleep(300_000)
        let other = CloudKitAPI(dataDirectory: f.root)
        let written = Date()
        _ = try other.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .create, recordName: "n1", recordType: "Item", recordChangeTag: nil, fields: [:])]),
                                    as: Caller(container: ServeFixture.container, deviceID: "phone"))
        let answer = try XCTUnwrap(client.readResponse())
        let took = Date().timeIntervalSince(written)
        XCTAssertEqual(((answer.json["ck"] as? [String: Any])?["qry"] as? [String: Any])?["rid"] as? String, "n1", answer.text)
        XCTAssertLessThan(took, 1.0, "woken by the delivery, not by the end of its 20 s")
    }

    /// A push token made without a session waits for its user: binding it (tokens/register)
    /// ends the waiting poll at once, and the next one is woken by the user's notifications.
    func testAPollOfAnUnboundTokenFollowsItsBinding() throws {
        let f = try ServeFixture(pollSeconds: 20)
        let made = try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/create?ckAPIToken=\(f.apiToken)", json: #"{"apnsEnvironment":"development"}"#)
        let apns = try XCTUnwrap(made["apnsToken"] as? String)
        let path = String(try XCTUnwrap(made["webcourierURL"] as? String).dropFirst(f.url.count))
        XCTAssertEqual(try f.post("private", "subscriptions/modify", #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"items","subscriptionType":"query","query":{"recordType":"Item"},"firesOn":["create"]}}]}"#).status, 200)
        let waiting = try openPoll(f, path)
        usleep(300_000)
        let bound = Date()
        XCTAssertEqual(try f.client().request("POST", "/device/1/\(ServeFixture.container)/development/tokens/register?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(enc(f.session))",
                                              json: #"{"apnsEnvironment":"development","apnsToken":"\#(apns)"}"#).status, 200)
        XCTAssertEqual(waiting.readResponse()?.text, "null")
        XCTAssertLessThan(Date().timeIntervalSince(bound), 1.0)
        let next = try openPoll(f, path)
        usleep(300_000)
        let written = Date()
        _ = try CloudKitAPI(dataDirectory: f.root).modifyRecords(ModifyRequest(operations: [RecordOperation(type: .create, recordName: "n2", recordType: "Item", recordChangeTag: nil, fields: [:])]),
                                                                 as: Caller(container: ServeFixture.container, deviceID: "phone"))
        let answer = try XCTUnwrap(next.readResponse())
        XCTAssertEqual(((answer.json["ck"] as? [String: Any])?["qry"] as? [String: Any])?["rid"] as? String, "n2", answer.text)
        XCTAssertLessThan(Date().timeIntervalSince(written), 1.0)
    }
}
