/// The messages of HTTP/1.1 as the server hands them to its handler and takes them back. The
/// engine (HTTPServer, HTTPConnection, HTTPRequestParser) knows nothing of CloudKit; the
/// handler knows nothing of sockets.

/// Header fields in the order received; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// The first value of `name`, if any.
    public subscript(name: String) -> String? {
        // By index: a closure over the fields copied each pair (retained and released) for
        // each of the dozen lookups of a request.
        for i in fields.indices where Self.sameName(fields[i].name, name) { return fields[i].value }
        return nil
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        var out: [String] = []
        for i in fields.indices where Self.sameName(fields[i].name, name) { out.append(fields[i].value) }
        return out
    }

    /// Field names are tokens (ASCII): compared byte by byte, A–Z as a–z, without making
    /// lowercased copies (several lookups a request).
    static func sameName(_ a: String, _ b: String) -> Bool {
        func lower(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
        guard a.utf8.count == b.utf8.count else { return false }
        // On the bytes in place (a generic `elementsEqual` over two views cost 300 instructions).
        var (a, b) = (a, b)
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for k in 0..<x.count where x[k] != y[k] && lower(x[k]) != lower(y[k]) { return false }
                return true
            }
        }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Sets `name` to one value, removing the others.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.sameName($0.name, name) }
        fields.append((name, value))
    }

    public mutating func remove(_ name: String) { fields.removeAll { Self.sameName($0.name, name) } }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// A request's line and headers: what the handler sees before any of the body is read.
public struct HTTPRequestHead: Sendable {
    /// The method as sent (`GET`, `POST`, …; case-sensitive, as HTTP has it).
    public var method: String
    /// The request-target exactly as received (`/database/1/…/records/query?ckAPIToken=…`):
    /// a server-to-server signature covers it byte for byte.
    public var target: String
    public var headers: HTTPHeaders
    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version: String

    public init(method: String, target: String, headers: HTTPHeaders, version: String = "HTTP/1.1") {
        self.method = method
        self.target = target
        self.headers = headers
        self.version = version
    }

    /// The target before `?`, not percent-decoded.
    public var path: String {
        guard let q = queryMark else { return target }
        return targetBytes { String(decoding: UnsafeBufferPointer(rebasing: $0[..<q]), as: UTF8.self) }
    }

    /// The raw query after `?`, if any.
    public var query: String? {
        guard let q = queryMark else { return nil }
        return targetBytes { String(decoding: UnsafeBufferPointer(rebasing: $0[(q + 1)...]), as: UTF8.self) }
    }

    /// The target's bytes, for cutting at its `?`: in UTF-8 that byte is never part of another
    /// character, so both sides are whole and decoding repairs nothing (the generic Substring
    /// views cost 1,000 instructions a call).
    private func targetBytes(_ body: (UnsafeBufferPointer<UInt8>) -> String) -> String {
        var t = target
        return t.withUTF8(body)
    }

    /// Where the `?` is, in bytes: found in the target's buffer (every request asks several
    /// times; a search through String.UTF8View's indices cost a lookup 3% of its time).
    private var queryMark: Int? {
        if let found = target.utf8.withContiguousStorageIfAvailable({ $0.firstIndex(of: UInt8(ascii: "?")) }) { return found }
        return target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target.utf8.distance(from: target.utf8.startIndex, to: $0) }
    }
}

/// A whole request: its head and its body (de-chunked).
public struct HTTPRequest: Sendable {
    public var head: HTTPRequestHead
    /// The body; empty when it went to `bodySink`.
    public var body: [UInt8]
    /// The peer, `127.0.0.1:53211`.
    public var remoteAddress: String
    /// Where the body went, when `admit` had it streamed (`.streamBody`).
    public var bodySink: (any HTTPBodySink)?
    /// How `respond` may wait (a long-poll) while the engine watches the client and the server.
    public var clientWait: HTTPClientWait
    /// What `admit` resolved from the head (a route, a credential checked), handed back as it
    /// was given: the handler's own type, which the engine never reads. It spares `respond`
    /// resolving the head again.
    public var context: (any Sendable)?

    public init(head: HTTPRequestHead, body: [UInt8], remoteAddress: String = "", bodySink: (any HTTPBodySink)? = nil,
                clientWait: HTTPClientWait = .detached, context: (any Sendable)? = nil) {
        self.head = head
        self.body = body
        self.remoteAddress = remoteAddress
        self.bodySink = bodySink
        self.clientWait = clientWait
        self.context = context
    }
}

/// Where a body too large to hold goes as it arrives (an asset upload, to a file). The engine
/// hands it the body piece by piece, then calls `respond` with it in `bodySink`; the handler
/// finishes it there.
public protocol HTTPBodySink: AnyObject, Sendable {
    /// The next bytes of the body, in order. False: take no more (the sink failed, and says why
    /// when the request is answered); the rest of the body is not read.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// The body did not arrive whole (the peer went away, stalled, or sent more than allowed):
    /// drop what was written. `respond` is not called.
    func abandon()
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Called once the answer is written (true) or could not be (false): what must happen only
    /// after the client has it — a web push marked delivered — happens there.
    public var onSent: (@Sendable (Bool) -> Void)?
    /// Close the connection without answering (a NETWORK_FAILURE fault: the client sees the
    /// connection drop, as when a request never reaches the service).
    public var dropConnection: Bool
    /// What the log line says of this answer beyond its status (a refusal's code and reason);
    /// never sent.
    public var logNote: String?

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], onSent: (@Sendable (Bool) -> Void)? = nil,
                dropConnection: Bool = false, logNote: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.onSent = onSent
        self.dropConnection = dropConnection
        self.logNote = logNote
    }
}

/// What the handler says of a request whose head has been read.
public enum HTTPAdmission: Sendable {
    /// Read a body of at most this many bytes, then call `respond` with the request and
    /// `context` (what the handler resolved from the head). A body announced (or, when
    /// chunked, growing) past it is answered with `tooLarge` before the rest is read.
    case readBody(maxBytes: Int, context: (any Sendable)? = nil)
    /// The same, the body handed to `sink` as it arrives instead of held (memory stays bounded
    /// whatever its size); `respond` then gets the request with the sink.
    case streamBody(maxBytes: Int, sink: any HTTPBodySink, context: (any Sendable)? = nil)
    /// Answer now without reading the body (the connection is closed after, when a body was
    /// announced and not read).
    case answer(HTTPResponse)
}

/// The server's side of the contract. Called from many connection threads at once.
public protocol HTTPHandler: AnyObject, Sendable {
    /// The head has been read: how much body to accept, or an answer without reading it.
    func admit(_ head: HTTPRequestHead) -> HTTPAdmission
    /// The whole request, with the context `admit` gave it: its answer. May block: a long-poll
    /// waits with `request.clientWait`, which ends early when the client goes away or the
    /// server stops.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// The answer to a request the engine refused itself: 400 malformed, 408 too slow, 413 a body
    /// over the limit, 414/431 a target or headers too long, 417 an Expect other than
    /// 100-continue, 501 a transfer coding it does not
    /// know, 505 a version it does not speak, 503 the connection cap reached. `reason` says what
    /// was wrong, for the body (CloudKit answers JSON on every status).
    func refusal(status: Int, reason: String) -> HTTPResponse
    /// The same, when the request's head was read (a body over the limit, one that stalled):
    /// the answer may depend on it (CORS headers for the page that sent it).
    func refusal(status: Int, reason: String, head: HTTPRequestHead) -> HTTPResponse
    /// One line per answered request, for the log: head (nil when none could be read), status,
    /// milliseconds from the first byte to the last byte sent, and the answer's `logNote`.
    func log(_ head: HTTPRequestHead?, status: Int, milliseconds: Double, note: String?)
}

extension HTTPHandler {
    public func refusal(status: Int, reason: String, head: HTTPRequestHead) -> HTTPResponse { refusal(status: status, reason: reason) }
}
