/// What callers use: one origin, one connection kept alive and remade when needed. Used from
/// one thread at a time.
///
/// A request on a reused connection that fails before any byte of the answer arrives (the
/// server closed an idle keep-alive connection) is sent once more on a new connection; nothing
/// else is retried here (pacing and retries belong to the caller).
public final class HTTPClient {
    private let connect: () throws -> any HTTPByteStream
    /// The `Host` field's value: the origin's authority (`127.0.0.1:8484`,
    /// `api.apple-cloudkit.com`), the same as in an absolute-form target.
    public let host: String
    public let limits: HTTPClientLimits
    private var connection: HTTPClientConnection?
    /// Connections made so far (tests count them to see reuse).
    public private(set) var connectionsMade = 0

    /// `connect` makes a new stream to the origin (a `TCPStream`, or the TLS helper's pipes);
    /// it should throw `HTTPClientError` `.connect` when it cannot.
    public init(connect: @escaping () throws -> any HTTPByteStream, host: String, limits: HTTPClientLimits = .init()) {
        self.connect = connect
        self.host = host
        self.limits = limits
    }

    deinit { connection?.close() }

    /// Sends `request` and returns its answer, whatever its status. Throws `HTTPClientError`.
    public func send(_ request: HTTPClientRequest) throws -> HTTPClientResponse {
        // A connection the server closed while idle is seen here, mostly, before anything is sent.
        if let idle = connection, !idle.isStillOpen() { connection = nil }
        let reused = connection != nil
        let current = try connection ?? newConnection()
        do {
            return try send(request, on: current)
        } catch let error as HTTPClientError where reused && error.kind == .closed && !current.answerStarted {
            // It closed after the check, or before the request reached it: once more, on a new one.
            return try send(request, on: newConnection())
        }
    }

    /// Closes the connection kept open, if any; the next request makes a new one.
    public func close() {
        connection?.close()
        connection = nil
    }

    private func newConnection() throws -> HTTPClientConnection {
        connection = nil
        let made = HTTPClientConnection(stream: try connect(), host: host, limits: limits)
        connectionsMade += 1
        connection = made
        return made
    }

    private func send(_ request: HTTPClientRequest, on current: HTTPClientConnection) throws -> HTTPClientResponse {
        defer { if !current.isReusable { connection = nil } }
        return try current.send(request)
    }
}
