/// One connection: sends a request, reads its whole answer; keep-alive unless either side says
/// close. Used from one thread at a time. A request that cannot be sent as it is (a method that
/// is not a token, a target or a header value holding a control) is refused with `malformed`
/// before any byte is written, and the connection stays as it was; any other failure closes it.
public final class HTTPClientConnection {
    private let stream: any HTTPByteStream
    /// The `Host` field's value: `127.0.0.1:8484`, `[::1]:8484`, `api.apple-cloudkit.com`.
    public let host: String
    public let limits: HTTPClientLimits
    /// Bytes received and not yet taken: what the head's last read brought of the body.
    private var buffer = ReadBuffer()
    private var isOpen = true
    /// Both sides agreed, so far, to carry another request.
    private var keepsAlive = true
    /// Whether any byte of the last request's answer arrived. A request whose answer never
    /// began on a reused connection may be sent again on a new one: the server most likely
    /// closed the idle connection before it read the request.
    private(set) var answerStarted = false

    public init(stream: any HTTPByteStream, host: String, limits: HTTPClientLimits = .init()) {
        self.stream = stream
        self.host = host
        self.limits = limits
    }

    deinit { if isOpen { stream.close() } }

    /// Whether another request may be sent: open, and neither side said close (nor sent an
    /// answer only the closing of the connection delimits).
    public var isReusable: Bool { isOpen && keepsAlive }

    public func close() {
        guard isOpen else { return }
        isOpen = false
        stream.close()
    }

    /// Sends `request` and reads its answer, skipping interim (1xx) ones. Throws
    /// `HTTPClientError`; its message never holds the request's target or header values.
    public func send(_ request: HTTPClientRequest) throws -> HTTPClientResponse {
        guard isReusable else { throw HTTPClientError(.closed, "the connection is closed") }
        let head = try encodeHead(request)
        answerStarted = false
        if connectionOptions(HTTPHeaders(request.headers)).contains("close") { keepsAlive = false }
        do {
            let response = try exchange(head: head, request: request)
            if !keepsAlive { close() }
            return response
        } catch {
            // Where the answer stopped is unknown: the connection cannot carry another.
            close()
            throw error
        }
    }

    /// False, and closed, when the peer closed the idle connection or sent bytes nobody asked
    /// for; asks the stream without waiting.
    func isStillOpen() -> Bool {
        guard isReusable else { return false }
        do {
            _ = try stream.read(maxCount: 1, timeout: 0)
        } catch let error as HTTPClientError where error.kind == .timedOut {
            return true
        } catch {}
        close()
        return false
    }

    // MARK: The request

    private func encodeHead(_ request: HTTPClientRequest) throws -> [UInt8] {
        func refuse(_ what: String) -> HTTPClientError { HTTPClientError(.malformed, "cannot send the request: " + what) }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isTokenByte) else { throw refuse("its method is not a token") }
        // Shown nowhere: a target may carry a session token.
        guard !request.target.isEmpty, request.target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw refuse("its target is empty or holds spaces, controls or non-ASCII bytes")
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw refuse("the host '\(host)' is empty or holds spaces, controls or non-ASCII bytes")
        }
        var text = "\(request.method) \(request.target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { throw refuse("a header field name is empty or not a token") }
            // A CR or LF in a value would start a field (or a request) of its own.
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw refuse("header field '\(name)' holds a control character")
            }
            if Self.framingFields.contains(where: { HTTPHeaders.sameName($0, name) }) { continue }
            text += "\(name): \(value)\r\n"
        }
        // A POST or PUT says it has no body, so the server does not wait for one (RFC 9110 §8.6).
        if !request.body.isEmpty || request.method == "POST" || request.method == "PUT" {
            text += "Content-Length: \(request.body.count)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Fields the connection sets itself: a caller's would contradict how the request is framed.
    private static let framingFields = ["Host", "Content-Length", "Transfer-Encoding"]

    private func exchange(head: [UInt8], request: HTTPClientRequest) throws -> HTTPClientResponse {
        do {
            // One write for a small request: with TCP_NODELAY, two would be two segments.
            if request.body.count <= 64 * 1024 {
                try stream.write(head + request.body)
            } else {
                try stream.write(head)
                try stream.write(request.body)
            }
        } catch let writeError as HTTPClientError where writeError.kind == .closed {
            // A server may answer before it has read the whole body (413) and close: the answer
            // may be waiting. Without one, the write's failure is the one to report.
            keepsAlive = false
            do { return try readResponse(method: request.method) } catch { throw writeError }
        }
        return try readResponse(method: request.method)
    }

    // MARK: The answer

    private func readResponse(method: String) throws -> HTTPClientResponse {
        var headBudget = limits.headerBytes
        while true {
            let (head, length) = try readHead(limit: headBudget)
            buffer.consume(length)
            headBudget -= length
            if head.isInterim { continue }
            if head.status == 101 {
                throw HTTPClientError(.malformed, "the server switched protocols (101), which the client did not ask for")
            }
            let framing = try ResponseBodyFraming.of(head, requestMethod: method).get()
            let body = try readBody(framing)
            // Bytes past the answer were not asked for: nothing after them can be trusted.
            keepsAlive = keepsAlive && head.keepsAlive && framing != .untilClose && buffer.isEmpty
            return HTTPClientResponse(status: head.status, reason: head.reason, headers: head.headers.fields, body: body)
        }
    }

    private func readHead(limit: Int) throws -> (HTTPResponseHead, Int) {
        var parser = HTTPResponseHeadParser(limit: limit, statedLimit: limits.headerBytes)
        while true {
            if !buffer.isEmpty {
                switch parser.parse(buffer.bytes) {
                case .incomplete: break
                case .complete(let head, let length): return (head, length)
                case .failed(let error): throw error
                }
            }
            guard try receive() else {
                throw HTTPClientError(.closed, answerStarted
                    ? "the connection closed in the middle of the response's status line and header fields"
                    : "the server closed the connection without answering")
            }
        }
    }

    private func readBody(_ framing: ResponseBodyFraming) throws -> [UInt8] {
        switch framing {
        case .none:
            return []
        case .length(let length):
            guard length <= limits.bodyBytes else {
                throw HTTPClientError(.tooLarge, "the response body is \(length) bytes, more than the limit of \(limits.bodyBytes)")
            }
            var body = buffer.take(length)
            body.reserveCapacity(length)
            while body.count < length {
                // Straight from the stream: no more than the body, so nothing is left over.
                let piece = try stream.read(maxCount: min(length - body.count, 256 * 1024), timeout: limits.timeout)
                guard !piece.isEmpty else {
                    throw HTTPClientError(.closed, "the connection closed after \(body.count) of the response body's \(length) bytes")
                }
                body += piece
            }
            return body
        case .chunked:
            var decoder = ChunkedBodyDecoder(maxBytes: limits.bodyBytes, lineLimit: limits.headerBytes)
            var body: [UInt8] = []
            while true {
                switch decoder.feed(&buffer, data: { body += $0; return true }) {
                case .done:
                    return body
                case .refused(let refusal):
                    switch refusal.status {
                    case 413: throw HTTPClientError(.tooLarge, "the response body is larger than \(limits.bodyBytes) bytes")
                    case 431: throw HTTPClientError(.tooLarge, "the response's trailer fields are longer than \(limits.headerBytes) bytes")
                    default: throw HTTPClientError(.malformed, "the response's chunked body is malformed: " + refusal.reason)
                    }
                case .needMore:
                    guard try receive() else {
                        throw HTTPClientError(.closed, "the connection closed after \(decoder.received) bytes of the chunked response body, before its last chunk")
                    }
                }
            }
        case .untilClose:
            var body = buffer.take(buffer.count)
            while true {
                guard body.count <= limits.bodyBytes else {
                    throw HTTPClientError(.tooLarge, "the response body is larger than \(limits.bodyBytes) bytes")
                }
                let piece = try stream.read(maxCount: 256 * 1024, timeout: limits.timeout)
                if piece.isEmpty { return body }
                body += piece
            }
        }
    }

    /// Reads what the stream has into the buffer; false at its end.
    private func receive() throws -> Bool {
        let piece = try stream.read(maxCount: 64 * 1024, timeout: limits.timeout)
        guard !piece.isEmpty else { return false }
        answerStarted = true
        piece.withUnsafeBytes { buffer.append($0) }
        return true
    }
}
