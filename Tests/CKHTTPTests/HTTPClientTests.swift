import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// The client against the engine's own server, in-process: round trips, keep-alive, and a
/// connection the server closed while idle.
final class HTTPClientTests: XCTestCase {
    private func echo(_ response: HTTPClientResponse) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    private func headers(_ echoed: [String: Any]) -> [String: String] {
        let pairs = (echoed["headers"] as? [[String]] ?? []).map { ($0[0].lowercased(), $0[1]) }
        return Dictionary(pairs, uniquingKeysWith: { a, _ in a })
    }

    func testGetAndPostRoundTrips() throws {
        let (server, _) = try startEngineServer()
        let client = httpClient(port: server.port)

        let get = try client.send(HTTPClientRequest(method: "GET", target: "/database/1/x?ckAPIToken=t&a=b", headers: [("Accept", "application/json")]))
        XCTAssertEqual(get.status, 200)
        XCTAssertEqual(get.reason, "OK")
        XCTAssertEqual(get.header("content-type"), "application/json")
        let got = try echo(get)
        XCTAssertEqual(got["method"] as? String, "GET")
        XCTAssertEqual(got["target"] as? String, "/database/1/x?ckAPIToken=t&a=b")
        XCTAssertEqual(got["version"] as? String, "HTTP/1.1")
        XCTAssertEqual(headers(got)["host"], "127.0.0.1:\(server.port)")
        XCTAssertEqual(headers(got)["accept"], "application/json")
        XCTAssertNil(headers(got)["content-length"], "a GET announces no body")

        let body = Array(#"{"records":[{"recordName":"é"}]}"#.utf8)
        let post = try client.send(HTTPClientRequest(method: "POST", target: "/records/modify", headers: [("Content-Type", "application/json")], body: body))
        let posted = try echo(post)
        XCTAssertEqual(posted["body"] as? String, String(decoding: body, as: UTF8.self))
        XCTAssertEqual(headers(posted)["content-length"], "\(body.count)")

        let empty = try echo(client.send(HTTPClientRequest(method: "POST", target: "/empty")))
        XCTAssertEqual(headers(empty)["content-length"], "0")
        XCTAssertEqual(empty["body"] as? String, "")

        // The engine's own refusal comes back as an answer, not an error.
        let refused = try client.send(HTTPClientRequest(method: "POST", target: "/refuse"))
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(client.connectionsMade, 1)
    }

    func testAssetSizedBodiesBothWays() throws {
        let (server, _) = try startEngineServer()
        let client = httpClient(port: server.port)
        let download = try client.send(HTTPClientRequest(method: "GET", target: "/big?n=6000000"))
        XCTAssertEqual(download.body.count, 6_000_000)
        XCTAssertTrue(download.body.allSatisfy { $0 == 0x62 })
        let upload = [UInt8](repeating: UInt8(ascii: "u"), count: 900_000)
        let echoed = try echo(client.send(HTTPClientRequest(method: "PUT", target: "/stream", body: upload)))
        XCTAssertEqual((echoed["body"] as? String)?.utf8.count, 900_000)
        XCTAssertEqual(client.connectionsMade, 1)
    }

    func testOneConnectionCarriesManyRequests() throws {
        let (server, handler) = try startEngineServer()
        let client = httpClient(port: server.port)
        var remotes = Set<String>()
        for i in 0..<50 {
            let method = i % 2 == 0 ? "GET" : "POST"
            let echoed = try echo(client.send(HTTPClientRequest(method: method, target: "/n/\(i)", body: method == "POST" ? [UInt8(i)] : [])))
            XCTAssertEqual(echoed["target"] as? String, "/n/\(i)")
            remotes.insert(echoed["remote"] as? String ?? "")
        }
        // The server saw one peer address, and the client made one connection.
        XCTAssertEqual(remotes.count, 1)
        XCTAssertEqual(client.connectionsMade, 1)
        XCTAssertEqual(handler.logged(count: 50).count, 50)
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testAConnectionTheServerClosedWhileIdleIsReplaced() throws {
        let (server, _) = try startEngineServer { $0.keepAliveIdleTimeout = 0.2 }
        let client = httpClient(port: server.port)
        let first = try echo(client.send(HTTPClientRequest(method: "GET", target: "/one")))
        waitFor { server.connectionCount == 0 }
        let second = try echo(client.send(HTTPClientRequest(method: "POST", target: "/two", body: [1, 2])))
        XCTAssertEqual(second["target"] as? String, "/two")
        XCTAssertNotEqual(first["remote"] as? String, second["remote"] as? String)
        XCTAssertEqual(client.connectionsMade, 2)
    }

    func testConnectionCloseAsked() throws {
        let (server, _) = try startEngineServer()
        let client = httpClient(port: server.port)
        let response = try client.send(HTTPClientRequest(method: "GET", target: "/", headers: [("Connection", "close")]))
        XCTAssertEqual(response.header("Connection"), "close")
        _ = try client.send(HTTPClientRequest(method: "GET", target: "/"))
        XCTAssertEqual(client.connectionsMade, 2)
    }

    /// The server answers 413 from the head and closes without reading the body: the answer
    /// arrives, however much of the body was written.
    func testABodyRefusedFromItsHeadStillGetsTheAnswer() throws {
        let (server, _) = try startEngineServer()
        let client = httpClient(port: server.port)
        let response = try client.send(HTTPClientRequest(method: "POST", target: "/small", body: [UInt8](repeating: 1, count: 4 << 20)))
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.header("X-Refusal"), "engine")
        XCTAssertEqual(try client.send(HTTPClientRequest(method: "GET", target: "/")).status, 200)
        XCTAssertEqual(client.connectionsMade, 2)
    }

    func testAHeadRequestReadsNoBody() throws {
        let (server, _) = try startEngineServer()
        let client = httpClient(port: server.port)
        let head = try client.send(HTTPClientRequest(method: "HEAD", target: "/big?n=5000"))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), "5000")
        XCTAssertEqual(head.body, [])
        XCTAssertEqual(try client.send(HTTPClientRequest(method: "GET", target: "/big?n=3")).body, Array("bbb".utf8))
        XCTAssertEqual(client.connectionsMade, 1)
    }

    private func waitFor(_ condition: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: 3)
        while !condition() && Date() < deadline { usleep(5_000) }
        XCTAssertTrue(condition())
    }
}
