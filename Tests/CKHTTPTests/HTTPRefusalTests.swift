import CKTestSupport
import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// Requests the engine refuses itself: the status, the handler's refusal body, `Connection:
/// close`, and the connection closed after.
final class HTTPRefusalTests: XCTestCase {
    /// Sends `request`, expects the refusal `status` whose reason mentions `reason`.
    private func assertRefused(_ request: String, _ status: Int, _ reason: String,
                               configure: (inout HTTPServerConfiguration) -> Void = { _ in },
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let (server, handler) = try startEngineServer(configure)
        let client = try RawHTTPClient(port: server.port)
        client.send(request)
        let response = try XCTUnwrap(client.readResponse(), "no response", file: file, line: line)
        XCTAssertEqual(response.status, status, response.text, file: file, line: line)
        XCTAssertEqual(response["X-Refusal"], "engine", file: file, line: line)
        XCTAssertEqual(response.json["status"] as? Int, status, file: file, line: line)
        let said = response.json["reason"] as? String ?? ""
        XCTAssertTrue(said.contains(reason), "reason: \(said)", file: file, line: line)
        XCTAssertEqual(response["Connection"], "close", file: file, line: line)
        XCTAssertTrue(client.isClosedByPeer(), "still open", file: file, line: line)
        XCTAssertEqual(handler.logged(count: 1).map(\.status), [status], file: file, line: line)
    }

    func testMalformedHeadsAre400() throws {
        try assertRefused("GET / HTTP/1.1\r\n\r\n", 400, "Host")
        try assertRefused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nX-A: one\r\n  folded\r\n\r\n", 400, "obs-fold")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n", 400, "name")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nX-A : x\r\n\r\n", 400, "name")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nNo colon here\r\n\r\n", 400, "colon")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n", 400, "control")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n", 400, "control")
        try assertRefused("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request line")
        // Exactly two spaces: none, one, a doubled one, or one at either end is refused.
        for line in ["GET", "GET /", "GET  / HTTP/1.1", "GET / HTTP/1.1 ", " GET / HTTP/1.1"] {
            try assertRefused(line + "\r\nHost: h\r\n\r\n", 400, "request line")
        }
        try assertRefused("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "method")
        try assertRefused("GET / HTTX/1.1\r\nHost: h\r\n\r\n", 400, "HTTP version")
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\n\r\n".replacingOccurrences(of: "/ ", with: "/é "), 400, "target")
    }

    func testBadFramingIs400() throws {
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", 400, "Content-Length")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", 400, "Content-Length")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, "disagree")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400, "once")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "hexadecimal")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n", 400, "longer than its size")
    }

    /// Duplicate Content-Length values that agree are one length.
    func testAgreeingContentLengthsAreAccepted() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc")
        XCTAssertEqual(client.readResponse()?.json["body"] as? String, "abc")
    }

    func testUnknownTransferCodingIs501() throws {
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "gzip")
    }

    func testAnUnknownExpectationIs417() throws {
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\nok", 417, "something-else")
    }

    func testUnsupportedVersionIs505() throws {
        try assertRefused("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505, "HTTP/2.0")
        try assertRefused("GET / HTTP/1.2\r\nHost: h\r\n\r\n", 505, "HTTP/1.2")
    }

    func testHeadersOverTheLimitAre431AndALongRequestLine414() throws {
        let small: (inout HTTPServerConfiguration) -> Void = { $0.headerLimit = 1024 }
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(String(repeating: "a", count: 2000))\r\n\r\n", 431, "1024", configure: small)
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\n" + String(repeating: "X-Many: v\r\n", count: 200) + "\r\n", 431, "header fields", configure: small)
        try assertRefused("GET /\(String(repeating: "a", count: 2000)) HTTP/1.1\r\nHost: h\r\n\r\n", 414, "request line", configure: small)
    }

    /// Refused on the head alone: the client never sends the body.
    func testABodyAnnouncedOverTheLimitIs413BeforeItIsSent() throws {
        try assertRefused("POST /small HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n", 413, "8 bytes")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999999\r\n\r\n", 413, "larger")
        try assertRefused("POST /small HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n", 413, "8 bytes")
    }

    func testAChunkedBodyGrowingOverTheLimitIs413() throws {
        try assertRefused("POST /small HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\n", 413, "8 bytes")
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", 413, "larger")
    }

    /// After a 413 the body still coming is read and dropped for a while (not reset), so a
    /// client busy uploading gets to read the answer.
    func testAfterA413TheBodyStillComingIsDrainedNotReset() throws {
        let (server, _) = try startEngineServer()
        let client = try RawHTTPClient(port: server.port)
        client.send("POST /small HTTP/1.1\r\nHost: h\r\nContent-Length: 300000\r\n\r\n")
        XCTAssertEqual(client.readResponse()?.status, 413)
        for _ in 0..<10 {
            usleep(10_000)
            XCTAssertTrue(client.send([UInt8](repeating: 0x61, count: 30_000)), "the connection was reset")
        }
        client.shutdownWrite()
        XCTAssertTrue(client.isClosedByPeer())
    }

    func testAStalledHeadIs408() throws {
        try assertRefused("GET / HTTP/1.1\r\nHost: h\r\n", 408, "head", configure: { $0.headerTimeout = 0.3 })
    }

    func testAStalledBodyIs408() throws {
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc", 408, "body", configure: { $0.bodyIdleTimeout = 0.3 })
        try assertRefused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 408, "body", configure: { $0.bodyIdleTimeout = 0.3 })
    }

    /// A dribbling client cannot stretch the head past its deadline one byte at a time.
    func testTheHeadDeadlineCountsFromTheFirstByte() throws {
        let (server, _) = try startEngineServer { $0.headerTimeout = 0.5 }
        let client = try RawHTTPClient(port: server.port)
        let start = Date()
        var answer: RawResponse?
        for byte in "GET / HTTP/1.1\r\nHost: h\r\nX-Slow: ".utf8 + Array(repeating: UInt8(ascii: "a"), count: 100) {
            guard client.send([byte]) else { break }
            usleep(20_000)
            if Date().timeIntervalSince(start) > 1 { break }
        }
        answer = client.readResponse()
        XCTAssertEqual(answer?.status, 408)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1.5)
    }
}
