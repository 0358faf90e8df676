import CKTestSupport
import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// The engine over real sockets: framing, keep-alive, the handler contract.
final class HTTPServerTests: XCTestCase {
    func testKeepAliveServesSeveralRequestsOnOneConnection() throws {
        let (server, handler) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        for i in 1...3 {
            client.send("GET /records/\(i)?x=%2B HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let response = try XCTUnwrap(client.readResponse())
            XCTAssertEqual(response.statusLine, "HTTP/1.1 200 OK")
            XCTAssertEqual(response.json["target"] as? String, "/records/\(i)?x=%2B")
            XCTAssertNil(response["Connection"])
            XCTAssertNotNil(response["Date"])
            XCTAssertEqual(response["Content-Type"], "application/json")
        }
        XCTAssertEqual(handler.logged(count: 3).map(\.status), [200, 200, 200])
        XCTAssertEqual(handler.logged.compactMap(\.head?.target).count, 3)
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("GET /one HTTP/1.1\r\nHost: h\r\n\r\nPOST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /three HTTP/1.1\r\nHost: h\r\n\r\n")
        let answers = (0..<3).compactMap { _ in client.readResponse() }
        XCTAssertEqual(answers.map { $0.json["target"] as? String }, ["/one", "/two", "/three"])
        XCTAssertEqual(answers[1].json["body"] as? String, "hello")
    }

    func testContentLengthBodyArrivingInPieces() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello")
        usleep(50_000)
        client.send(" world")
        let response = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(response.json["body"] as? String, "hello world")
        let headers = response.json["headers"] as? [[String]]
        XCTAssertEqual(headers?.first { $0[0] == "Content-Type" }?[1], "text/plain")
    }

    func testChunkedBodyWithExtensionsAndTrailers() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n")
        usleep(30_000)
        client.send("6\r\n world\r\nA\r\n0123456789\r\n0\r\nX-Trailer: dropped\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n")
        let response = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json["body"] as? String, "hello world0123456789")
        XCTAssertEqual(try XCTUnwrap(client.readResponse()).json["target"] as? String, "/after")
    }

    /// What `admit` resolved from the head comes back to `respond` with the whole request, the
    /// body held or streamed to the handler's sink, by length or chunked; the engine never
    /// reads it.
    func testWhatAdmitResolvedComesBackWithTheRequest() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("GET /a?q=1 HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(try XCTUnwrap(client.readResponse()).json["context"] as? String, "admitted /a?q=1")
        client.send("POST /stream HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        let streamed = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(streamed.json["context"] as? String, "streamed /stream")
        XCTAssertEqual(streamed.json["body"] as? String, "hello")
        client.send("POST /stream HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        XCTAssertEqual(try XCTUnwrap(client.readResponse()).json["body"] as? String, "abcde")
        client.send("POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        let held = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(held.json["context"] as? String, "admitted /b")
        XCTAssertEqual(held.json["body"] as? String, "abc")
    }

    /// The 100 arrives before any body byte is sent; the final answer after it.
    func testExpectContinueIsAnsweredBeforeTheBodyIsSent() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        let interim = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(interim.statusLine, "HTTP/1.1 100 Continue")
        client.send("body")
        let final = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(final.status, 200)
        XCTAssertEqual(final.json["body"] as? String, "body")
    }

    func testExpectContinueAnsweredByAdmitGetsTheAnswerAndNoContinue() throws {
        let (server, handler) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("POST /refuse HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        let answer = try XCTUnwrap(client.readResponse())
        XCTAssertEqual(answer.status, 403)
        XCTAssertEqual(answer.json["refused"] as? String, "/refuse")
        XCTAssertEqual(answer["Connection"], "close")
        XCTAssertTrue(client.isClosedByPeer())
        XCTAssertEqual(handler.logged(count: 1).map(\.status), [403])
    }

    /// An answer from admit to a request without a body keeps the connection.
    func testAnAdmitAnswerWithoutABodyKeepsTheConnection() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("GET /refuse HTTP/1.1\r\nHost: h\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(client.readResponse()?.status, 403)
        XCTAssertEqual(client.readResponse()?.json["target"] as? String, "/next")
    }

    func testHeadHasTheGetsLengthAndNoBody() throws {
        let (server, handler) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("GET /same HTTP/1.1\r\nHost: h\r\n\r\n")
        let get = try XCTUnwrap(client.readResponse())
        client.send("HEAD /same HTTP/1.1\r\nHost: h\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n")
        let head = try XCTUnwrap(client.readResponse(forHEAD: true))
        XCTAssertEqual(head.status, 200)
        // The handler saw HEAD; the echo says so, so its length differs from the GET's by one byte.
        XCTAssertEqual(Int(head["Content-Length"] ?? ""), get.body.count + 1)
        // Had a body been sent, it would be read here as the next response's start.
        XCTAssertEqual(client.readResponse()?.json["target"] as? String, "/after")
        XCTAssertEqual(handler.logged(count: 3).compactMap(\.head?.method), ["GET", "HEAD", "GET"])
    }

    func testConnectionCloseIsHonoured() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(client.readResponse()?["Connection"], "close")
        XCTAssertTrue(client.isClosedByPeer())
    }

    func testHTTP10ClosesUnlessAskedToKeepAlive() throws {
        let (server, _) = try startEngineServer()
        let plain = try RawHTTPClient(port: server.port)
        plain.send("GET / HTTP/1.0\r\n\r\n")
        let first = try XCTUnwrap(plain.readResponse())
        XCTAssertEqual(first.json["version"] as? String, "HTTP/1.0")
        XCTAssertEqual(first["Connection"], "close")
        XCTAssertTrue(plain.isClosedByPeer())

        let kept = try RawHTTPClient(port: server.port)
        kept.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        XCTAssertEqual(kept.readResponse()?["Connection"], "keep-alive")
        kept.send("GET /b HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
        XCTAssertEqual(kept.readResponse()?.json["target"] as? String, "/b")
        // A chunked body from a 1.0 peer is served, then the connection closes.
        kept.send("POST /c HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        let chunked = try XCTUnwrap(kept.readResponse())
        XCTAssertEqual(chunked.json["body"] as? String, "ok")
        XCTAssertEqual(chunked["Connection"], "close")
        XCTAssertTrue(kept.isClosedByPeer())
    }

    func testAKeptAliveConnectionIdleTooLongIsClosedQuietly() throws {
        let (server, handler) = try startEngineServer { $0.keepAliveIdleTimeout = 0.3 }
        let client = try RawHTTPClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(client.readResponse()?.status, 200)
        let waited = secondsSpent { XCTAssertTrue(client.isClosedByPeer()) }
        XCTAssertLessThan(waited, 1.5)
        XCTAssertEqual(handler.logged(count: 1).map(\.status), [200])
    }

    func testStartingOnAPortInUseNamesTheAddress() throws {
        let (server, _) = try startEngineServer()
        let second = HTTPServer(configuration: HTTPServerConfiguration(port: server.port), handler: EngineTestHandler())
        XCTAssertThrowsError(try second.start()) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("127.0.0.1:\(server.port)"), message)
            XCTAssertTrue(message.lowercased().contains("in use"), message)
        }
        second.waitUntilStopped()  // never started: returns at once
    }

    /// localhost is both loopbacks on one port (IPv6 where the machine has it).
    func testLocalhostListensOnBothLoopbacks() throws {
        let (server, _) = try startEngineServer { $0.host = "localhost" }
        let client = try RawHTTPClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual(client.readResponse()?.json["remote"] as? String, "127.0.0.1:\(Listener.port(of: client.localAddress))")
        guard let v6 = try? RawHTTPClient(host: "::1", port: server.port) else { throw XCTSkip("no IPv6 loopback here") }
        v6.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        XCTAssertEqual((v6.readResponse()?.json["remote"] as? String)?.hasPrefix("[::1]:"), true)
    }

    func testIPv6LoopbackAlone() throws {
        guard let (server, _) = try? startEngineServer({ $0.host = "::1" }) else { throw XCTSkip("no IPv6 loopback here") }
        let client = try RawHTTPClient(host: "::1", port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        XCTAssertEqual(client.readResponse()?.status, 200)
        XCTAssertThrowsError(try RawHTTPClient(port: server.port), "::1 must not take IPv4")
    }

    func testAnUnknownHostIsAClearError() {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "no-such-host.invalid", port: 0), handler: EngineTestHandler())
        XCTAssertThrowsError(try server.start()) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot listen on no-such-host.invalid:0: cannot resolve the host"), "\(error)")
        }
    }
}
