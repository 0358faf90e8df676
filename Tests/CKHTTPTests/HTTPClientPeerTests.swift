import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// The client against a peer that answers what each test scripts: framings the engine never
/// uses, and hostile or broken answers, each a clear `HTTPClientError`.
final class HTTPClientPeerTests: XCTestCase {
    private let get = HTTPClientRequest(method: "GET", target: "/r")

    /// A peer whose one connection reads a request and answers `answer`, then waits for the
    /// client to close.
    private func answering(_ answer: String, trickled: Bool = false) throws -> ScriptedHTTPPeer {
        try scriptedPeer([{ c in
            c.readRequest()
            if trickled { c.trickle(answer) } else { c.send(answer) }
            c.readUntilClosed()
        }])
    }

    // MARK: What is sent

    func testTheRequestOnTheWireHasHostAndContentLengthSetByTheClient() throws {
        let peer = try scriptedPeer([{ c in
            for _ in 0..<3 {
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            }
        }])
        let client = httpClient(port: peer.port)
        _ = try client.send(HTTPClientRequest(method: "GET", target: "/database/1/x?a=b", headers: [("Accept", "application/json")]))
        // The caller's Host and Content-Length are replaced: they would contradict the framing.
        _ = try client.send(HTTPClientRequest(method: "POST", target: "/p", headers: [("host", "elsewhere"), ("Content-Length", "99"), ("X-A", "1")]))
        _ = try client.send(HTTPClientRequest(method: "PUT", target: "https://example.com/up", body: Array("abc".utf8)))
        XCTAssertEqual(peer.requests, [
            "GET /database/1/x?a=b HTTP/1.1\r\nHost: 127.0.0.1:\(peer.port)\r\nAccept: application/json\r\n\r\n",
            "POST /p HTTP/1.1\r\nHost: 127.0.0.1:\(peer.port)\r\nX-A: 1\r\nContent-Length: 0\r\n\r\n",
            "PUT https://example.com/up HTTP/1.1\r\nHost: 127.0.0.1:\(peer.port)\r\nContent-Length: 3\r\n\r\n",
        ])
        XCTAssertEqual(peer.accepted, 1)
    }

    func testARequestThatCannotBeSentIsRefusedBeforeAnyByteAndTheConnectionStaysUsable() throws {
        let peer = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        }])
        let client = httpClient(port: peer.port)
        XCTAssertEqual(try client.send(get).status, 200)
        let refused: [HTTPClientRequest] = [
            HTTPClientRequest(method: "GET", target: "/a b?secret"),
            HTTPClientRequest(method: "G T", target: "/"),
            HTTPClientRequest(method: "GET", target: "/", headers: [("X-Token", "secret\r\nX-Injected: 1")]),
            HTTPClientRequest(method: "GET", target: "/", headers: [("Bad Name", "v")]),
        ]
        for request in refused {
            let error = assertClientError(.malformed) { try client.send(request) }
            XCTAssertEqual(error?.message.contains("secret"), false)
        }
        XCTAssertEqual(try client.send(get).status, 200)
        XCTAssertEqual(peer.requests.count, 2)
        XCTAssertEqual(peer.accepted, 1)
    }

    // MARK: Framings

    func testAChunkedAnswerWithExtensionsAndTrailersIsDecodedAndKeepsTheConnection() throws {
        let peer = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                + "5;name=value\r\nhello\r\n6 ; x=\"y\"\r\n world\r\n0\r\nX-Checksum: abc\r\nX-More: 1\r\n\r\n")
            c.readRequest()
            c.trickle("HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n")
            c.readUntilClosed()
        }])
        let client = httpClient(port: peer.port)
        let first = try client.send(get)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(String(decoding: first.body, as: UTF8.self), "hello world")
        XCTAssertEqual(first.header("content-type"), "text/plain")
        XCTAssertNil(first.header("X-Checksum"), "trailer fields are dropped")
        // Sent a byte at a time, on the same connection.
        let second = try client.send(get)
        XCTAssertEqual(String(decoding: second.body, as: UTF8.self), "abcdefghijklmnopqrstuvwxyz")
        XCTAssertEqual(client.connectionsMade, 1)
        XCTAssertEqual(peer.accepted, 1)
    }

    func testAnAnswerWithoutALengthIsReadUntilTheServerCloses() throws {
        let peer = try scriptedPeer([
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of ")
                usleep(50_000)
                c.send("this")
            },
            { c in
                // HTTP/1.0 without keep-alive: closed after the answer, too.
                c.readRequest()
                c.send("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
                c.readUntilClosed()
            },
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                c.readUntilClosed()
            },
        ])
        let client = httpClient(port: peer.port)
        XCTAssertEqual(String(decoding: try client.send(get).body, as: UTF8.self), "all of this")
        XCTAssertEqual(String(decoding: try client.send(get).body, as: UTF8.self), "ok")
        XCTAssertEqual(String(decoding: try client.send(get).body, as: UTF8.self), "ok")
        XCTAssertEqual(client.connectionsMade, 3)
        XCTAssertEqual(peer.accepted, 3)
    }

    func testInterimAnswersAreSkipped() throws {
        let peer = try answering("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
        let response = try httpClient(port: peer.port).send(HTTPClientRequest(method: "POST", target: "/p", body: [1, 2, 3]))
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.reason, "Created")
        XCTAssertNil(response.header("Link"))
        XCTAssertEqual(response.body, Array("ok".utf8))
    }

    func testHeadAnd204And304HaveNoBodyWhateverTheirLength() throws {
        let peer = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
            c.readRequest()
            c.send("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
            c.readRequest()
            c.send("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n")
            c.readRequest()
            c.send("HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok")
        }])
        let client = httpClient(port: peer.port)
        let head = try client.send(HTTPClientRequest(method: "HEAD", target: "/r"))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), "100")
        XCTAssertEqual(head.body, [])
        XCTAssertEqual(try client.send(get).status, 204)
        XCTAssertEqual(try client.send(get).status, 304)
        let last = try client.send(get)
        XCTAssertEqual(last.status, 200)
        XCTAssertEqual(last.reason, "", "a status line without a reason phrase is taken")
        XCTAssertEqual(last.body, Array("ok".utf8))
        XCTAssertEqual(peer.accepted, 1)
    }

    func testBytesPastTheAnswerEndTheConnection() throws {
        let peer = try scriptedPeer([
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
                c.readUntilClosed()
            },
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                c.readUntilClosed()
            },
        ])
        let client = httpClient(port: peer.port)
        XCTAssertEqual(try client.send(get).body, Array("ok".utf8))
        XCTAssertEqual(try client.send(get).body, Array("ok".utf8))
        XCTAssertEqual(peer.accepted, 2)
    }

    // MARK: Broken answers

    func testATruncatedBodyIsClosed() throws {
        let byLength = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfour")
        }])
        let error = assertClientError(.closed) { try self.httpClient(port: byLength.port).send(self.get) }
        XCTAssertEqual(error?.message, "the connection closed after 4 of the response body's 10 bytes")

        let chunked = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nfour\r\n")
        }])
        assertClientError(.closed) { try self.httpClient(port: chunked.port).send(self.get) }

        let inHead = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Le")
        }])
        let headError = assertClientError(.closed) { try self.httpClient(port: inHead.port).send(self.get) }
        XCTAssertEqual(headError?.message, "the connection closed in the middle of the response's status line and header fields")
    }

    func testAPeerThatClosesAtOnceIsClosedAndNotTriedAgain() throws {
        let peer = try scriptedPeer([{ _ in }, { _ in }])
        let client = httpClient(port: peer.port)
        let error = assertClientError(.closed) { try client.send(self.get) }
        XCTAssertEqual(error?.message, "the server closed the connection without answering")
        // A new connection's failure is the server's answer: it is not sent again.
        XCTAssertEqual(client.connectionsMade, 1)
        XCTAssertEqual(peer.accepted, 1)
    }

    func testAnswersThatAreNotHTTPAreMalformed() throws {
        let cases: [(answer: String, message: String)] = [
            ("HELLO\r\n\r\n", "the response does not begin with a status line ('HTTP/1.1 200 OK')"),
            ("SSH-2.0-OpenSSH_9.6\r\n\r\n", "the response does not begin with a status line ('HTTP/1.1 200 OK')"),
            ("HTTP/2.0 200 OK\r\n\r\n", "the response's HTTP version HTTP/2.0 is not 1.0 or 1.1"),
            ("HTTP/1.1 2x0 OK\r\n\r\n", "the status line has no three-digit status code"),
            ("HTTP/1.1 2000 OK\r\n\r\n", "the status line has no three-digit status code"),
            ("HTTP/1.1 700 Odd\r\n\r\n", "the status code 700 is not between 100 and 599"),
            ("HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", "the response's header fields are malformed: a header field is folded over lines (obs-fold)"),
            ("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "the response's header fields are malformed: a header field has no colon"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", "the response has both Content-Length and Transfer-Encoding"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n", "the response's Content-Length values disagree"),
            ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "the response's Content-Length '-1' is not a number of bytes"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "the response's transfer coding 'gzip' is not supported"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "the response's chunked body is malformed: a chunk size is not hexadecimal"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", "the response's chunked body is malformed: a chunk is longer than its size"),
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", "the server switched protocols (101), which the client did not ask for"),
        ]
        for (answer, message) in cases {
            let peer = try answering(answer)
            let error = assertClientError(.malformed) { try self.httpClient(port: peer.port).send(self.get) }
            XCTAssertEqual(error?.message, message, answer)
        }
    }

    // MARK: Limits

    func testHeadsAndBodiesPastTheLimitsAreTooLarge() throws {
        let limits = HTTPClientLimits(headerBytes: 1024, bodyBytes: 1000, timeout: 2)
        let long = String(repeating: "v", count: 2000)
        let cases: [(answer: String, message: String)] = [
            ("HTTP/1.1 200 OK\r\nX-Long: \(long)\r\n\r\n", "the response's status line and header fields are longer than 1024 bytes"),
            // Interim answers count towards the same limit: endless 100s are not endless.
            (String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 60), "the response's status line and header fields are longer than 1024 bytes"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n", "the response body is 1001 bytes, more than the limit of 1000"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", "the response body is \(Int.max) bytes, more than the limit of 1000"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n\(String(repeating: "x", count: 1000))\r\n1\r\n", "the response body is larger than 1000 bytes"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Long: \(long)\r\n\r\n", "the response's trailer fields are longer than 1024 bytes"),
            ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n\(String(repeating: "x", count: 1001))", "the response body is larger than 1000 bytes"),
        ]
        for (answer, message) in cases {
            let peer = try answering(answer)
            let error = assertClientError(.tooLarge) { try self.httpClient(port: peer.port, limits: limits).send(self.get) }
            XCTAssertEqual(error?.message.hasPrefix(message), true, "\(error?.message ?? "") — \(message)")
        }
    }

    func testAPeerThatNeverAnswersTimesOut() throws {
        let peer = try scriptedPeer([{ c in
            c.readRequest()
            c.readUntilClosed()
        }])
        let client = httpClient(port: peer.port, limits: HTTPClientLimits(timeout: 0.3))
        let waited = secondsSpent {
            let error = assertClientError(.timedOut) { try client.send(self.get) }
            XCTAssertEqual(error?.message, "127.0.0.1:\(peer.port) sent nothing for 0.3 s")
        }
        XCTAssertGreaterThanOrEqual(waited, 0.3)
        XCTAssertLessThan(waited, 1.5)
        // A timeout is not a closed idle connection: not sent again.
        XCTAssertEqual(client.connectionsMade, 1)
    }

    func testTheTimeoutIsBetweenReadsNotForTheWholeAnswer() throws {
        let peer = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n")
            for byte in "patience".utf8 {
                usleep(100_000)
                c.send([byte])
            }
            c.readUntilClosed()
        }])
        // 0.8 s in all, never more than 0.1 s without a byte.
        let response = try httpClient(port: peer.port, limits: HTTPClientLimits(timeout: 0.45)).send(get)
        XCTAssertEqual(response.body, Array("patience".utf8))
    }

    // MARK: Reuse and its one retry

    func testARequestTheIdleConnectionDroppedUnansweredIsSentOnceMoreOnANewOne() throws {
        let peer = try scriptedPeer([
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
                // The second request is read, then the connection closed without a byte: what a
                // server closing an idle connection as the request arrives looks like.
                c.readRequest()
            },
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond")
                c.readUntilClosed()
            },
        ])
        let client = httpClient(port: peer.port)
        XCTAssertEqual(try client.send(get).body, Array("first".utf8))
        XCTAssertEqual(try client.send(HTTPClientRequest(method: "POST", target: "/p", body: [1])).body, Array("second".utf8))
        XCTAssertEqual(peer.accepted, 2)
        XCTAssertEqual(peer.requests.count, 3)
    }

    func testAnAnswerCutOffPartWayIsNotSentAgain() throws {
        let peer = try scriptedPeer([
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nse")
            },
            { c in
                c.readRequest()
                c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                c.readUntilClosed()
            },
        ])
        let client = httpClient(port: peer.port)
        XCTAssertEqual(try client.send(get).status, 200)
        assertClientError(.closed) { try client.send(HTTPClientRequest(method: "POST", target: "/p", body: [1])) }
        XCTAssertEqual(peer.accepted, 1)
        // The next request makes a new connection.
        XCTAssertEqual(try client.send(get).body, Array("ok".utf8))
        XCTAssertEqual(client.connectionsMade, 2)
    }

    // MARK: Errors keep secrets

    func testNoErrorMessageHoldsTheTargetOrAHeaderValue() throws {
        let answers = ["HELLO\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab", "HTTP/1.1 200 OK\r\nBad\r\n\r\n", ""]
        for answer in answers {
            let peer = try scriptedPeer([{ c in
                c.readRequest()
                c.send(answer)
            }])
            let request = HTTPClientRequest(method: "POST", target: "/database/1/c/development/public/records/query?ckSession=SECRET1",
                                            headers: [("X-Apple-CloudKit-Request-SignatureV1", "SECRET2")], body: Array("{}".utf8))
            let client = httpClient(port: peer.port, limits: HTTPClientLimits(timeout: 0.3))
            do {
                _ = try client.send(request)
                XCTFail("no error for \(answer)")
            } catch let error as HTTPClientError {
                XCTAssertFalse(error.message.contains("SECRET"), error.message)
                XCTAssertFalse(error.message.contains("ckSession"), error.message)
            }
        }
    }

    // MARK: The TCP stream

    func testAPeerGoneMidUploadFailsTheRequest() throws {
        let peer = try scriptedPeer([{ c in
            // Closing with unread bytes resets the connection: the client's next writes fail.
            usleep(50_000)
        }])
        let client = httpClient(port: peer.port)
        let big = HTTPClientRequest(method: "PUT", target: "/asset", body: [UInt8](repeating: 7, count: 32 << 20))
        assertClientError(.closed) { try client.send(big) }
    }

    /// The first write after a reset fails with ECONNRESET; the next with EPIPE, which raises
    /// SIGPIPE unless the write says MSG_NOSIGNAL — and SIGPIPE's default kills the process.
    func testWritingToAResetConnectionFailsInsteadOfRaisingSIGPIPE() throws {
        let previous = signal(SIGPIPE, SIG_DFL)
        defer { signal(SIGPIPE, previous) }
        let peer = try scriptedPeer([{ _ in }])
        let stream = try TCPStream.connect(host: "127.0.0.1", port: Int(peer.port), timeout: 2)
        // Taken by the kernel until the peer, closed, answers with a reset.
        var firstFailure: HTTPClientError?
        for _ in 0..<200 where firstFailure == nil {
            do { try stream.write([1]) } catch let error as HTTPClientError { firstFailure = error }
            usleep(10_000)
        }
        XCTAssertEqual(firstFailure?.kind, .closed)
        assertClientError(.closed) { try stream.write([2]) }
        stream.close()
        assertClientError(.closed) { try stream.read(maxCount: 1, timeout: 0) }
    }

    func testConnectingWhereNobodyListensFailsWithTheAddress() throws {
        let peer = try ScriptedHTTPPeer([])
        let port = peer.port
        peer.stop()
        let error = assertClientError(.connect) { try TCPStream.connect(host: "127.0.0.1", port: Int(port), timeout: 1) }
        XCTAssertEqual(error?.message, "cannot connect to 127.0.0.1:\(port): Connection refused")
        let unresolvable = assertClientError(.connect) { try TCPStream.connect(host: "no-such-host.invalid", port: 80, timeout: 1) }
        XCTAssertEqual(unresolvable?.message.hasPrefix("cannot connect to no-such-host.invalid:80: cannot resolve the host"), true)
        assertClientError(.connect) { try TCPStream.connect(host: "127.0.0.1", port: 0, timeout: 1) }
    }

    func testConnectingToAnIPv6LiteralAndAName() throws {
        let peer = try scriptedPeer([{ c in
            c.readRequest()
            c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        }])
        // localhost resolves to ::1 and 127.0.0.1; the peer listens on the second only.
        let stream = try TCPStream.connect(host: "localhost", port: Int(peer.port), timeout: 2)
        let connection = HTTPClientConnection(stream: stream, host: "localhost:\(peer.port)")
        XCTAssertEqual(try connection.send(get).body, Array("ok".utf8))
        connection.close()
        XCTAssertFalse(connection.isReusable)
        // An IPv6 literal, bracketed or not (nobody listens there: refused, not unresolvable).
        for host in ["::1", "[::1]"] {
            let error = assertClientError(.connect) { try TCPStream.connect(host: host, port: Int(peer.port), timeout: 1) }
            XCTAssertEqual(error?.message.contains("cannot resolve"), false, error?.message ?? "")
        }
    }
}
