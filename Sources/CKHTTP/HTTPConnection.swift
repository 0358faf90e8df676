/// One client's connection, served on its own thread from accept to close: read a head, ask the
/// handler, read the body, answer, and again while the connection is kept alive. Every wait has
/// its own deadline, so a slow client only ever holds up itself.
final class HTTPConnection {
    private let socket: HTTPSocket
    private let configuration: HTTPServerConfiguration
    private let handler: HTTPHandler
    private let remoteAddress: String
    /// Readable once the server is stopping: ends the wait for a next request.
    private let stopSignal: Int32
    private let isStopping: () -> Bool
    /// Tells the server whether the connection waits for a request's head (it may then be
    /// closed to make room for another); false when, told it is busy, the server had closed it
    /// already.
    private let waitingForHead: (Bool) -> Bool
    private var buffer = ReadBuffer()

    init(fd: Int32, remoteAddress: String, configuration: HTTPServerConfiguration, handler: HTTPHandler,
         stopSignal: Int32, isStopping: @escaping () -> Bool, waitingForHead: @escaping (Bool) -> Bool = { _ in true }) {
        self.socket = HTTPSocket(fd: fd)
        self.remoteAddress = remoteAddress
        self.configuration = configuration
        self.handler = handler
        self.stopSignal = stopSignal
        self.isStopping = isStopping
        self.waitingForHead = waitingForHead
    }

    /// How the connection ends: closed at once, or drained first because the peer may still be
    /// sending a body nobody read.
    private enum Next { case keepAlive, close, closeDraining }

    /// Serves requests until the connection is to end, then drains what the peer may still be
    /// sending when a body was left unread. The caller closes (`close()`) once it has forgotten
    /// the socket, so nobody can shut down a reused descriptor.
    func run() {
        if serve() == .closeDraining {
            socket.drain(until: instant(after: configuration.lingerTimeout))
        }
    }

    func close() { socket.closeNow() }

    private func serve() -> Next {
        var first = true
        while true {
            // Between requests the connection is idle: a stop ends it here, silently.
            if buffer.isEmpty {
                if isStopping() { return .close }
                let idle = first ? configuration.headerTimeout : configuration.keepAliveIdleTimeout
                guard socket.receive(into: &buffer, until: instant(after: idle), interrupt: stopSignal) == .data else { return .close }
            }
            first = false
            let next = serveOne()
            if next != .keepAlive { return next }
            _ = waitingForHead(true)
        }
    }

    /// One request, from its first byte (already in the buffer) to its answer.
    private func serveOne() -> Next {
        let started = now()
        var parser = HTTPHeadParser(limit: configuration.headerLimit)
        let headDeadline = instant(after: configuration.headerTimeout, from: started)
        var parsed: (HTTPRequestHead, Int)?
        while parsed == nil {
            switch parser.parse(buffer.bytes) {
            case .complete(let head, let length): parsed = (head, length)
            case .refused(let refusal): return refuse(refusal, head: nil, started: started)
            case .incomplete:
                switch socket.receive(into: &buffer, until: headDeadline) {
                case .data: continue
                case .timedOut:
                    return refuse(HTTPRefusal(status: 408, reason: "the request head did not arrive within \(configuration.headerTimeout) s"), head: nil, started: started)
                case .closed, .interrupted: return .close
                }
            }
        }
        let (head, length) = parsed!
        buffer.consume(length)
        // Closed to make room while its head came in: the request is neither admitted nor
        // acted on (its answer could not be sent; the client sees the connection end).
        guard waitingForHead(false) else { return .close }

        let framing: BodyFraming
        switch BodyFraming.of(head) {
        case .success(let f): framing = f
        case .failure(let refusal): return refuse(refusal, head: head, started: started)
        }
        // An expectation other than 100-continue cannot be met (RFC 9110 §10.1.1).
        if let expectation = head.headers["Expect"], expectation.lowercased() != "100-continue" {
            return refuse(HTTPRefusal(status: 417, reason: "expectation '\(expectation)' is not supported; only 100-continue is"), head: head, started: started)
        }
        let connectionTokens = head.headers.values("Connection")
            .flatMap { $0.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: " \t") } }
        // HTTP/1.0 keeps the connection only when asked, and never after a chunked body: a
        // 1.0 peer using it may not frame what follows as we would (RFC 9112 §6.1).
        let wantsClose = connectionTokens.contains("close")
            || (head.version == "HTTP/1.0" && (!connectionTokens.contains("keep-alive") || framing == .chunked))
        let keepAlive10 = head.version == "HTTP/1.0" && !wantsClose
        let expectsContinue = head.version == "HTTP/1.1" && framing.hasBody
            && head.headers["Expect"]?.lowercased() == "100-continue"

        switch handler.admit(head) {
        case .answer(let response):
            // A body announced and not read: the connection cannot be reused.
            let close = wantsClose || framing.hasBody || isStopping() || response.closesConnection || response.dropConnection
            send(response, head: head, close: close, keepAlive10: keepAlive10, started: started)
            return !close ? .keepAlive : framing.hasBody ? .closeDraining : .close
        case .readBody(let maxBytes, let context):
            return serveBody(head, framing, maxBytes: maxBytes, sink: nil, context: context, expectsContinue: expectsContinue,
                             wantsClose: wantsClose, keepAlive10: keepAlive10, started: started)
        case .streamBody(let maxBytes, let sink, let context):
            return serveBody(head, framing, maxBytes: maxBytes, sink: sink, context: context, expectsContinue: expectsContinue,
                             wantsClose: wantsClose, keepAlive10: keepAlive10, started: started)
        }
    }

    /// Reads an admitted request's body — held for `respond`, or handed to the handler's `sink`
    /// as it arrives — then answers it. A body that did not arrive whole is abandoned.
    private func serveBody(_ head: HTTPRequestHead, _ framing: BodyFraming, maxBytes: Int, sink: (any HTTPBodySink)?,
                           context: (any Sendable)?, expectsContinue: Bool, wantsClose: Bool, keepAlive10: Bool, started: Instant) -> Next {
        if case .length(let n) = framing, n > maxBytes {
            sink?.abandon()
            return refuse(HTTPRefusal(status: 413, reason: "the request body is larger than \(maxBytes) bytes"), head: head, started: started)
        }
        let held = sink == nil ? HeldBody(framing) : nil
        let target: any HTTPBodySink = sink ?? held!
        if expectsContinue {
            guard socket.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), until: instant(after: configuration.writeTimeout)) else {
                target.abandon()
                return .close
            }
        }
        let complete: Bool
        switch receiveBody(framing, maxBytes: maxBytes, into: target) {
        case .success(let whole): complete = whole
        case .failure(let refusal):
            target.abandon()
            if refusal.status == 0 { return .close }  // the peer went away
            return refuse(refusal, head: head, started: started)
        }
        // A sink that stopped taking bytes answers why; the rest of the body is not read.
        let request = HTTPRequest(head: head, body: held?.bytes ?? [], remoteAddress: remoteAddress, bodySink: sink, context: context)
        return answer(request, wantsClose: wantsClose, bodyLeft: !complete, keepAlive10: keepAlive10, started: started)
    }

    /// Hands a whole request to the handler and sends its answer.
    private func answer(_ request: HTTPRequest, wantsClose: Bool, bodyLeft: Bool, keepAlive10: Bool, started: Instant) -> Next {
        var request = request
        request.clientWait = HTTPClientWait(socket: socket.fd, stopSignal: stopSignal)
        let response = handler.respond(to: request)
        let close = wantsClose || bodyLeft || isStopping() || response.closesConnection
        guard send(response, head: request.head, close: close, keepAlive10: keepAlive10, started: started) else { return .close }
        return bodyLeft ? .closeDraining : close ? .close : .keepAlive
    }

    /// The body as framed, handed to `sink` as it arrives: whether all of it was taken (false:
    /// the sink stopped taking it), or a refusal (status 0 when the peer closed mid-body).
    private func receiveBody(_ framing: BodyFraming, maxBytes: Int, into sink: any HTTPBodySink) -> Result<Bool, HTTPRefusal> {
        let gone = HTTPRefusal(status: 0, reason: "")
        var pacing = BodyPacing(configuration)
        switch framing {
        case .none, .length(0):
            return .success(true)
        case .length(let n):
            var left = n
            while left > 0 {
                if buffer.isEmpty {
                    switch pacing.receive(socket, into: &buffer) {
                    case .data: break
                    case .timedOut: return .failure(pacing.stalled)
                    case .closed, .interrupted: return .failure(gone)
                    }
                }
                let piece = buffer.bytes.prefix(left)
                let taken = piece.withUnsafeBytes { sink.write($0) }
                guard taken else { return .success(false) }
                buffer.consume(piece.count)
                left -= piece.count
            }
            return .success(true)
        case .chunked:
            var decoder = ChunkedBodyDecoder(maxBytes: maxBytes, lineLimit: configuration.headerLimit)
            var stopped = false
            while true {
                switch decoder.feed(&buffer, data: { piece in
                    stopped = !piece.withUnsafeBytes { sink.write($0) }
                    return !stopped
                }) {
                case .done: return .success(true)
                case .refused(let refusal): return .failure(refusal)
                case .needMore:
                    if stopped { return .success(false) }
                    switch pacing.receive(socket, into: &buffer) {
                    case .data: continue
                    case .timedOut: return .failure(pacing.stalled)
                    case .closed, .interrupted: return .failure(gone)
                    }
                }
            }
        }
    }

    /// Answers a request the engine will not serve, and closes: what follows in the stream
    /// cannot be trusted to start a request.
    private func refuse(_ refusal: HTTPRefusal, head: HTTPRequestHead?, started: Instant) -> Next {
        let response = head.map { handler.refusal(status: refusal.status, reason: refusal.reason, head: $0) }
            ?? handler.refusal(status: refusal.status, reason: refusal.reason)
        send(response, head: head, close: true, keepAlive10: false, started: started)
        return .closeDraining
    }

    @discardableResult
    private func send(_ response: HTTPResponse, head: HTTPRequestHead?, close: Bool, keepAlive10: Bool, started: Instant) -> Bool {
        if response.dropConnection {
            // Nothing is written: the client sees the connection end, as a network failure.
            handler.log(head, status: 0, milliseconds: milliseconds(since: started), note: response.logNote)
            return false
        }
        let bytes = response.encoded(omitBody: head?.method == "HEAD", close: close, keepAlive10: keepAlive10)
        let sent = socket.send(bytes, until: instant(after: configuration.writeTimeout))
        handler.log(head, status: response.status, milliseconds: milliseconds(since: started), note: response.logNote)
        response.onSent?(sent)
        return sent
    }
}

/// A body held whole for `respond` (`.readBody`): the sink the engine reads it into.
private final class HeldBody: HTTPBodySink, @unchecked Sendable {
    var bytes: [UInt8] = []

    init(_ framing: BodyFraming) {
        // Room up front for what is announced, within reason: a peer may announce and stall.
        if case .length(let n) = framing { bytes.reserveCapacity(min(n, 1 << 20)) }
    }

    func write(_ piece: UnsafeRawBufferPointer) -> Bool {
        bytes.append(contentsOf: piece)
        return true
    }

    func abandon() { bytes = [] }
}

/// The pace a body must keep: no `bodyIdleTimeout` without a byte, and, once that long has
/// passed, at least `bodyMinimumRate` bytes a second on average — so a client trickling a byte
/// just within every idle timeout is given up on too.
struct BodyPacing {
    let idle: Double
    let rate: Double
    let started = now()
    var received = 0

    init(_ configuration: HTTPServerConfiguration) {
        idle = configuration.bodyIdleTimeout
        rate = configuration.bodyMinimumRate
    }

    var stalled: HTTPRefusal {
        HTTPRefusal(status: 408, reason: "the request body stalled for \(idle) s, or came slower than \(Int(rate)) bytes a second")
    }

    /// One read, by the earlier of the two deadlines.
    mutating func receive(_ socket: HTTPSocket, into buffer: inout ReadBuffer) -> ReceiveOutcome {
        let deadline = min(instant(after: idle), instant(after: idle + Double(received + 1) / rate, from: started))
        let before = buffer.count
        let r = socket.receive(into: &buffer, until: deadline)
        received += max(0, buffer.count - before)
        return r
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
