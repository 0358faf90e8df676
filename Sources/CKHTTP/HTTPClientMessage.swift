/// The messages of HTTP/1.1 as a client sends and receives them, and the limits it holds the
/// answers to.

/// A request as the caller gives it. The connection adds `Host` and `Content-Length` itself
/// (replacing any the caller set, and any `Transfer-Encoding`): the body is always sent whole,
/// by length.
public struct HTTPClientRequest: Sendable {
    /// `GET`, `POST`, `PUT`, `HEAD`, … (case-sensitive, as HTTP has it).
    public var method: String
    /// Origin-form (`/database/1/…/records/query?ckAPIToken=…`), or absolute-form
    /// (`https://api.apple-cloudkit.com/…`) for a proxy or the TLS helper; sent byte for byte.
    public var target: String
    /// Sent in order. `Connection: close` ends the connection after the answer.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }
}

/// A whole answer: its status, header fields in the order received, and its body (de-chunked;
/// trailer fields are read and dropped).
public struct HTTPClientResponse: Sendable {
    public let status: Int
    /// The reason phrase as sent (may be empty); HTTP gives it no meaning.
    public let reason: String
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(status: Int, reason: String = "", headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The first value of `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { HTTPHeaders.sameName($0.name, name) }?.value
    }
}

/// How much of an answer the client takes, and how long it waits for it.
public struct HTTPClientLimits: Sendable {
    /// Bytes of the status line and header fields together (any 1xx interim answers before the
    /// final one count too), and of a chunked body's trailer fields.
    public var headerBytes: Int
    /// Bytes of the body, de-chunked.
    public var bodyBytes: Int
    /// Seconds the peer may go without sending a byte while an answer is due (how long a write
    /// may wait is the stream's own: `TCPStream.writeTimeout`).
    public var timeout: Double

    public init(headerBytes: Int = 64 * 1024, bodyBytes: Int = 64 * 1024 * 1024, timeout: Double = 60) {
        self.headerBytes = headerBytes
        self.bodyBytes = bodyBytes
        self.timeout = timeout
    }
}
