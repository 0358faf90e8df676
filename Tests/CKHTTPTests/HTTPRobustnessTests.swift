import CKTestSupport
import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// Hostile and unlucky peers: the connection cap, stalled clients, stopping, and arbitrary bytes.
final class HTTPRobustnessTests: XCTestCase {
    func testConnectionsPastTheCapGet503AndAreClosedAtOnce() throws {
        let (server, handler) = try startEngineServer { $0.maxConnections = 3; $0.headerTimeout = 5 }
        // Each connection busy with a request: none is idle to make room.
        let busy = try (0..<3).map { _ in try RawHTTPClient(port: server.port) }
        busy.forEach { $0.send("GET /sleep?ms=1500 HTTP/1.1\r\nHost: h\r\n\r\n") }
        waitUntil { server.connectionCount == 3 }
        usleep(100_000)
        let extra = try RawHTTPClient(port: server.port)
        let waited = try secondsSpent {
            let refused = try XCTUnwrap(extra.readResponse())
            XCTAssertEqual(refused.status, 503)
            XCTAssertEqual(refused["X-Refusal"], "engine")
            XCTAssertEqual(refused["Connection"], "close")
            XCTAssertTrue(extra.isClosedByPeer())
        }
        XCTAssertLessThan(waited, 0.5)
        XCTAssertEqual(handler.logged(count: 1).map(\.status), [503])
        XCTAssertNil(handler.logged.first?.head)

        // A slot freed is a slot taken.
        busy[0].shutdownWrite()
        waitUntil { server.connectionCount == 2 }
        let next = try RawHTTPClient(port: server.port)
        next.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(next.readResponse()?.status, 200)
        withExtendedLifetime(busy) {}
    }

    /// Connections that hold a slot without a request — never sending one, sending a head a
    /// byte at a time, kept alive after their answer — cannot lock others out: 256 of them kept
    /// every other client at 503 for as long as their owner reopened them. At the cap, the one
    /// waiting longest for its request's head is closed to make room.
    func testIdleConnectionsAtTheCapMakeRoomForANewOne() throws {
        let (server, _) = try startEngineServer { $0.maxConnections = 3; $0.headerTimeout = 5; $0.keepAliveIdleTimeout = 5 }
        let silent = try RawHTTPClient(port: server.port)
        waitUntil { server.connectionCount == 1 }
        usleep(50_000)
        let partial = try RawHTTPClient(port: server.port)
        partial.send("GET / HTTP/1.1\r\nHo")
        waitUntil { server.connectionCount == 2 }
        usleep(50_000)
        let kept = try RawHTTPClient(port: server.port)
        kept.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(kept.readResponse()?.status, 200)
        // Its thread marks it waiting after the answer is sent: wait for that, so the order
        // of the three is settled before a newcomer comes (on a loaded machine it was not).
        waitUntil { server.connectionCount == 3 && server.connectionsWaitingForHead == 3 }
        var newcomers: [RawHTTPClient] = []
        for expectedClosed in [silent, partial, kept] {
            let waited = try secondsSpent {
                let client = try RawHTTPClient(port: server.port)
                client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
                XCTAssertEqual(client.readResponse()?.status, 200, "a client found the cap held by idle connections")
                XCTAssertTrue(expectedClosed.isClosedByPeer(), "the connection idle longest was not the one closed")
                // Kept alive, it is idle in its turn, and the newest.
                newcomers.append(client)
            }
            XCTAssertLessThan(waited, 2.5, "the newcomer waited for a timeout, not for room made")
            waitUntil { server.connectionsWaitingForHead == 3 }
            usleep(50_000)
        }
        XCTAssertEqual(server.connectionCount, 3)
    }

    /// A body trickled one byte just within each idle timeout is given up on too: the body's
    /// average rate is timed, not only the gap between bytes.
    func testATrickledBodyIsGivenUpOnLikeAStalledOne() throws {
        let (server, _) = try startEngineServer { $0.headerTimeout = 1; $0.bodyIdleTimeout = 1 }
        let client = try RawHTTPClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
        let start = Date()
        var open = true
        while open, Date().timeIntervalSince(start) < 6 {
            usleep(700_000)
            open = client.send("x")
        }
        XCTAssertFalse(open, "a body trickled at one byte per 0.7 s (idle timeout 1 s) was still being read after 6 s")
    }

    /// 40 clients stalled mid-head or mid-body cost another client nothing; each stalled one is
    /// given up on at its own deadline.
    func testFortyStalledClientsDoNotDelayAnother() throws {
        let (server, _) = try startEngineServer { $0.headerTimeout = 1.5; $0.bodyIdleTimeout = 1.5 }
        var stalled: [RawHTTPClient] = []
        for i in 0..<40 {
            let client = try RawHTTPClient(port: server.port)
            client.send(i % 2 == 0 ? "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Le"
                                   : "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly part")
            stalled.append(client)
        }
        waitUntil { server.connectionCount == 40 }
        for _ in 0..<3 {
            let waited = try secondsSpent {
                let client = try RawHTTPClient(port: server.port)
                client.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok")
                XCTAssertEqual(client.readResponse()?.json["body"] as? String, "ok")
            }
            XCTAssertLessThan(waited, 0.25)
        }
        let statuses = stalled.map { $0.readResponse()?.status }
        XCTAssertEqual(statuses, Array(repeating: 408, count: 40))
        waitUntil { server.connectionCount == 0 }
        XCTAssertEqual(server.connectionCount, 0)
    }

    /// A client that never reads its answer holds only its own thread, until the write times out.
    func testAClientThatDoesNotReadIsGivenUpOnAtTheWriteTimeout() throws {
        let (server, handler) = try startEngineServer { $0.writeTimeout = 0.4 }
        let sluggish = try RawHTTPClient(port: server.port)
        var small: Int32 = 4096
        setsockopt(sluggish.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        sluggish.send("GET /big?n=20000000 HTTP/1.1\r\nHost: h\r\n\r\n")
        waitUntil { server.connectionCount == 1 }
        let waited = try secondsSpent {
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            XCTAssertEqual(client.readResponse()?.status, 200)
        }
        XCTAssertLessThan(waited, 0.25)
        waitUntil { server.connectionCount == 0 }
        XCTAssertEqual(server.connectionCount, 0, "the stalled write was not given up on")
        XCTAssertEqual(handler.logged(count: 2).count, 2)
    }

    /// stop(grace:) lets the request in flight finish, closes the idle connection, and takes no
    /// new ones.
    func testStopFinishesTheRequestInFlightAndRefusesNewConnections() throws {
        let (server, _) = try startEngineServer()
        let idle = try RawHTTPClient(port: server.port)
        idle.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(idle.readResponse()?.status, 200)
        let busy = try RawHTTPClient(port: server.port)
        busy.send("GET /sleep?ms=600 HTTP/1.1\r\nHost: h\r\n\r\n")
        usleep(100_000)

        let stopped = DispatchSemaphore(value: 0)
        let started = Date()
        Thread.detachNewThread {
            server.stop(grace: 5)
            stopped.signal()
        }
        XCTAssertTrue(secondsSpent { XCTAssertTrue(idle.isClosedByPeer()) } < 0.4, "the idle connection was not closed at once")
        XCTAssertThrowsError(try RawHTTPClient(port: server.port), "a new connection was accepted")
        let answer = try XCTUnwrap(busy.readResponse())
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer["Connection"], "close")
        XCTAssertEqual(stopped.wait(timeout: .now() + 3), .success)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        server.waitUntilStopped()
    }

    /// Past the grace, a request still running is cut off and stop returns.
    func testStopReturnsAfterTheGraceWhenARequestOutlastsIt() throws {
        let (server, _) = try startEngineServer()
        let busy = try RawHTTPClient(port: server.port)
        busy.send("GET /sleep?ms=1500 HTTP/1.1\r\nHost: h\r\n\r\n")
        usleep(100_000)
        let took = secondsSpent { server.stop(grace: 0.2) }
        XCTAssertLessThan(took, 1)
        XCTAssertGreaterThanOrEqual(took, 0.15)
        XCTAssertNil(busy.readResponse())
        server.waitUntilStopped()
    }

    /// Random bytes, truncated and mangled heads, absurd lengths: the server answers each with a
    /// well-formed response or closes, and still serves a normal request after.
    func testNoInputCrashesOrHangsTheServer() throws {
        let (server, _) = try startEngineServer { $0.headerTimeout = 0.5; $0.bodyIdleTimeout = 0.5; $0.headerLimit = 4096 }
        var generator = SplitMix(seed: 29)
        let valid = Array("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
        var inputs: [[UInt8]] = [
            Array("GET / HTTP/1.1\r\nHost: h\r\nX: \(String(repeating: "y", count: 100_000))\r\n\r\n".utf8),
            Array("\(String(repeating: "G", count: 100_000)) / HTTP/1.1\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n".utf8),
            Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n".utf8),
            Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -5\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551617\r\n\r\n".utf8),
            Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\(String(repeating: "T: t\r\n", count: 20_000))".utf8),
            Array("\r\n\r\n\r\n".utf8), Array("\n".utf8), [0], Array("GET".utf8), Array(" / HTTP/1.1\r\n\r\n".utf8),
            Array("GET / HTTP/1.1\nHost: h\n\n".utf8),
        ]
        for length in 1..<valid.count { inputs.append(Array(valid[0..<length])) }  // every truncation
        for _ in 0..<500 {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:  // random bytes
                inputs.append((0..<Int.random(in: 1..<2000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            case 1:  // a valid request with bytes flipped
                var bytes = valid
                for _ in 0..<Int.random(in: 1..<6, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                inputs.append(bytes)
            default:  // pieces of HTTP glued at random
                let pieces = ["GET ", "POST ", "/", " HTTP/1.1", " HTTP/1.0", "\r\n", "\n", ": ", "Host", "Content-Length", "Transfer-Encoding",
                              "chunked", "0", "ffffffff", ";", "\r\n\r\n", "Expect", "100-continue", " ", "\t", "\0"]
                inputs.append(Array((0..<Int.random(in: 1..<30, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined().utf8))
            }
        }
        // Several connections at once, as fuzzing peers would.
        DispatchQueue.concurrentPerform(iterations: inputs.count) { i in
            guard let client = try? RawHTTPClient(port: server.port, timeout: 3) else { return XCTFail("connect failed") }
            client.send(inputs[i])
            client.shutdownWrite()
            let reply = client.readToEnd()
            if !reply.isEmpty {
                let line = String(decoding: reply.prefix(12), as: UTF8.self)
                XCTAssertTrue(line.hasPrefix("HTTP/1.1 "), "input \(i) got \(line)")
            }
        }
        do {
            let client = try RawHTTPClient(port: server.port)
            client.send(valid)
            XCTAssertEqual(client.readResponse()?.json["body"] as? String, "hello")
        }
        waitUntil { server.connectionCount == 0 }
        XCTAssertEqual(server.connectionCount, 0)
    }

    /// A peer that vanishes while its answer is written costs a failed write, not the process.
    func testAPeerThatVanishesMidResponseDoesNotKillTheServer() throws {
        let (server, _) = try startEngineServer()
        for _ in 0..<20 {
            let client = try RawHTTPClient(port: server.port)
            let body = String(repeating: "z", count: 500_000)
            client.send("POST /sleep?ms=20 HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            var linger = linger(l_onoff: 1, l_linger: 0)  // close with a reset
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }
        usleep(200_000)
        let client = try RawHTTPClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertEqual(client.readResponse()?.status, 200)
    }

    private func waitUntil(_ condition: () -> Bool, timeout: TimeInterval = 3) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() && Date() < deadline { usleep(5_000) }
    }
}
