import XCTest
@testable import CKHTTP

/// The parser without sockets: incremental heads, framing, chunked bodies.
final class HTTPParserTests: XCTestCase {
    private func parseAll(_ text: String, limit: Int = 65536) -> HeadParseResult {
        var parser = HTTPHeadParser(limit: limit)
        return parser.parse(Array(text.utf8)[...])
    }

    /// A head arriving one byte at a time is the same head, complete exactly at its last byte.
    func testAHeadArrivingByteByByte() throws {
        let text = "\r\nPOST /a?b=c HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nX-Spaces: \t v  \r\n\r\nBODY"
        let bytes = Array(text.utf8)
        var parser = HTTPHeadParser(limit: 65536)
        for n in 1...bytes.count {
            switch parser.parse(bytes[0..<n]) {
            case .incomplete:
                continue
            case .complete(let head, let length):
                XCTAssertEqual(length, bytes.count - 4)
                XCTAssertEqual(n, length)
                XCTAssertEqual(head.method, "POST")
                XCTAssertEqual(head.target, "/a?b=c")
                XCTAssertEqual(head.headers["x-empty"], "")
                XCTAssertEqual(head.headers["X-Spaces"], "v")
                return
            case .refused(let refusal):
                return XCTFail("refused: \(refusal)")
            }
        }
        XCTFail("never complete")
    }

    func testBareLineFeedsEndLinesToo() {
        guard case .complete(let head, _) = parseAll("GET / HTTP/1.1\nHost: h\n\n") else { return XCTFail() }
        XCTAssertEqual(head.headers["Host"], "h")
    }

    func testObsTextInAValueIsKept() {
        guard case .complete(let head, _) = parseAll("GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\u{e9}\r\n\r\n") else { return XCTFail() }
        XCTAssertEqual(head.headers["X-Name"], "caf\u{e9}")
    }

    func testTheLimitCountsTheWholeHead() {
        let head = "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
        if case .refused = parseAll(head, limit: head.utf8.count) { XCTFail("a head of exactly the limit is refused") }
        guard case .refused(let refusal) = parseAll(head, limit: head.utf8.count - 1) else { return XCTFail() }
        XCTAssertEqual(refusal.status, 431)
        guard case .refused(let long) = parseAll("GET /aaaaaaaaaaaaaaaa", limit: 10) else { return XCTFail() }
        XCTAssertEqual(long.status, 414)
        guard case .refused(let empty) = parseAll(String(repeating: "\r\n", count: 100), limit: 50) else { return XCTFail("endless empty lines") }
        XCTAssertEqual(empty.status, 414)
    }

    /// The scan that jumps from line end to line end decides every head as reading it a byte at
    /// a time did (the scan before it, kept here as the reference): the same lines, the same
    /// refusal at the same limit, at every split of the bytes into arrivals.
    func testTheScanAgreesWithReadingAByteAtATime() {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["GET / HTTP/1.1", "POST /a?b=c HTTP/1.1", "Host: h", "X: y", "", "\r", "\t v ", "Content-Length: 3", "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.0", "HTTP/1.1 200 OK"]
        for _ in 0..<3_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...7, using: &rng) {
                bytes += Array(pieces.randomElement(using: &rng)!.utf8)
                bytes += Bool.random(using: &rng) ? [0x0D, 0x0A] : [0x0A]
            }
            if Bool.random(using: &rng) { bytes += [0x0D, 0x0A] }
            if Bool.random(using: &rng) { bytes += Array("BODY".utf8) }
            let limit = Int.random(in: 1...120, using: &rng)
            var parser = HTTPHeadParser(limit: limit)
            // A response's head is found by the same scan (HeadLines).
            var responseParser = HTTPResponseHeadParser(limit: limit)
            var reference = ByteAtATimeHead(limit: limit)
            var end = 0
            while end < bytes.count {
                end = min(bytes.count, end + Int.random(in: 1...40, using: &rng))
                let expected = reference.parse(bytes[0..<end])
                let got = describe(parser.parse(bytes[0..<end])), want = describe(expected)
                let what = "limit \(limit), \(end) of \(String(decoding: bytes, as: UTF8.self).debugDescription)"
                XCTAssertEqual(got, want, what)
                // A response head that does not parse ended where the request's did.
                let response = scanned(responseParser.parse(bytes[0..<end])), reached = scanned(expected, reference.scanned)
                XCTAssertTrue(response == reached || (response == "ended" && reached.hasPrefix("ended at")), "\(response) / \(reached): \(what)")
                if got != "incomplete" || got != want { break }
            }
        }
    }

    /// Where a scan stopped: the head's end, past the limit, or not yet.
    private func scanned(_ r: HeadParseResult, _ length: Int) -> String {
        switch r {
        case .incomplete: return "incomplete"
        case .refused(let refusal) where refusal.status == 414 || refusal.status == 431: return "too long"
        case .complete, .refused: return "ended at \(length)"
        }
    }

    private func scanned(_ r: ResponseHeadParseResult) -> String {
        switch r {
        case .incomplete: return "incomplete"
        case .failed(let error) where error.kind == .tooLarge: return "too long"
        case .complete(_, let length): return "ended at \(length)"
        case .failed: return "ended"
        }
    }

    private func describe(_ r: HeadParseResult) -> String {
        switch r {
        case .incomplete: return "incomplete"
        case .complete(let head, let length): return "complete \(length): \(head.method) \(head.target) \(head.headers.fields.map { "\($0.name)=\($0.value)" })"
        case .refused(let refusal): return "refused \(refusal.status) \(refusal.reason)"
        }
    }

    private func framing(_ fields: [(String, String)], version: String = "HTTP/1.1") -> Result<BodyFraming, HTTPRefusal> {
        BodyFraming.of(HTTPRequestHead(method: "POST", target: "/", headers: HTTPHeaders(fields), version: version))
    }

    func testFraming() {
        XCTAssertEqual(try framing([]).get(), BodyFraming.none)
        XCTAssertEqual(try framing([("Content-Length", "12")]).get(), .length(12))
        XCTAssertEqual(try framing([("Content-Length", "007"), ("content-length", "7")]).get(), .length(7))
        XCTAssertEqual(try framing([("Content-Length", "99999999999999999999999")]).get(), .length(Int.max))
        XCTAssertEqual(try framing([("Transfer-Encoding", "Chunked")]).get(), .chunked)
        XCTAssertEqual(framing([("Content-Length", "+5")]).refusalStatus, 400)
        XCTAssertEqual(framing([("Content-Length", "")]).refusalStatus, 400)
        XCTAssertEqual(framing([("Content-Length", "5"), ("Content-Length", "6")]).refusalStatus, 400)
        XCTAssertEqual(framing([("Transfer-Encoding", "chunked"), ("Content-Length", "6")]).refusalStatus, 400)
        XCTAssertEqual(framing([("Transfer-Encoding", "gzip")]).refusalStatus, 501)
        XCTAssertEqual(framing([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]).refusalStatus, 400)
        XCTAssertEqual(framing([("Transfer-Encoding", "")]).refusalStatus, 400)
    }

    private func decode(_ text: String, maxBytes: Int = 1000, byteByByte: Bool) -> (ChunkedBodyDecoder.Progress, [UInt8], Int) {
        var decoder = ChunkedBodyDecoder(maxBytes: maxBytes)
        var buffer = ReadBuffer()
        var progress = ChunkedBodyDecoder.Progress.needMore
        var body: [UInt8] = []
        let bytes = Array(text.utf8)
        let pieces = byteByByte ? bytes.map { [$0] } : [bytes]
        for piece in pieces {
            piece.withUnsafeBytes { buffer.append($0) }
            progress = decoder.feed(&buffer) { body += $0; return true }
            if progress != .needMore { break }
        }
        return (progress, body, buffer.count)
    }

    func testChunkedBodiesWholeOrByteByByte() {
        for byteByByte in [false, true] {
            let (progress, body, left) = decode("4;ext=1\r\nWiki\r\n5 ; x\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: t\r\n\r\nNEXT", byteByByte: byteByByte)
            XCTAssertEqual(progress, .done)
            XCTAssertEqual(String(decoding: body, as: UTF8.self), "Wikipedia in\r\n\r\nchunks.")
            XCTAssertEqual(left, byteByByte ? 0 : 4, "what follows the body stays in the buffer")
        }
    }

    func testChunkSizesThatAreWrongOrTooLarge() {
        XCTAssertEqual(decode("ffffffffffffffffffffffff\r\n", byteByByte: false).0, .refused(HTTPRefusal(status: 413, reason: "the request body is larger than 1000 bytes")))
        XCTAssertEqual(decode("3e9\r\n", byteByByte: false).0.status, 413)   // 1001
        XCTAssertEqual(decode("3e8\r\n", byteByByte: false).0, .needMore)     // 1000
        XCTAssertEqual(decode("-1\r\n", byteByByte: false).0.status, 400)
        XCTAssertEqual(decode("\r\n", byteByByte: false).0.status, 400)
        XCTAssertEqual(decode("0x10\r\n", byteByByte: false).0.status, 400)
        XCTAssertEqual(decode("2\r\nabc\r\n", byteByByte: false).0.status, 400)
        XCTAssertEqual(decode(String(repeating: "1", count: 5000), byteByByte: false).0.status, 400)
    }

    func testResponsesCarryLengthDateAndConnection() {
        var headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "999"), ("X-Bad", "a\r\nInjected: yes"), ("X-Nul", "a\u{0}b")])
        headers.add("Bad Name", "dropped")
        let text = String(decoding: HTTPResponse(status: 404, headers: headers, body: Array("{}".utf8)).encoded(omitBody: false, close: true), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nX-Bad: aInjected: yes\r\nX-Nul: ab\r\nContent-Length: 2\r\nDate: "), text)
        XCTAssertTrue(text.hasSuffix(" GMT\r\nConnection: close\r\n\r\n{}"), text)
        let head = HTTPResponse(status: 200, body: Array("abc".utf8)).encoded(omitBody: true, close: false)
        XCTAssertTrue(String(decoding: head, as: UTF8.self).contains("Content-Length: 3\r\n"))
        XCTAssertTrue(String(decoding: head, as: UTF8.self).hasSuffix("\r\n\r\n"))
        XCTAssertEqual(httpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT")
        for n in [0, 7, 10, 204, 65_536, Int.max, -1, Int.min] {
            var out: [UInt8] = []
            appendDecimal(n, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), String(n))
        }
    }
}

private extension Result where Failure == HTTPRefusal {
    var refusalStatus: Int? { if case .failure(let r) = self { return r.status } else { return nil } }
}

private extension ChunkedBodyDecoder.Progress {
    var status: Int? { if case .refused(let r) = self { return r.status } else { return nil } }
}

/// The head scan as it was, a byte at a time: the reference the faster scan must agree with.
private struct ByteAtATimeHead {
    let limit: Int
    private(set) var scanned = 0
    private var lineStart = 0
    private var lines: [Range<Int>] = []

    init(limit: Int) { self.limit = limit }

    mutating func parse(_ buffer: ArraySlice<UInt8>) -> HeadParseResult {
        let base = buffer.startIndex
        var i = base + scanned
        while i < buffer.endIndex {
            if buffer[i] == 0x0A {
                var end = i
                if end > base + lineStart && buffer[end - 1] == 0x0D { end -= 1 }
                let line = (base + lineStart)..<end
                lineStart = i + 1 - base
                if line.isEmpty {
                    if !lines.isEmpty {
                        scanned = i + 1 - base
                        if scanned > limit { return .refused(tooLong()) }
                        switch HTTPHeadParser.head(lines.map { buffer[$0] }) {
                        case .success(let head): return .complete(head, length: scanned)
                        case .failure(let refusal): return .refused(refusal)
                        }
                    }
                } else {
                    lines.append(line)
                }
            }
            i += 1
            if i - base > limit {
                scanned = i - base
                return .refused(tooLong())
            }
        }
        scanned = i - base
        return .incomplete
    }

    private func tooLong() -> HTTPRefusal {
        lines.isEmpty
            ? HTTPRefusal(status: 414, reason: "the request line is longer than \(limit) bytes")
            : HTTPRefusal(status: 431, reason: "the request's header fields are longer than \(limit) bytes")
    }
}
