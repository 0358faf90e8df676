import Foundation

/// Where the server listens and how long it waits for slow peers. The defaults suit `ck serve`;
/// tests shorten the timeouts so a stalled client is given up on in a moment.
public struct HTTPServerConfiguration: Sendable {
    /// `127.0.0.1`, `::1`, `localhost` (both loopbacks), `0.0.0.0`, `::`, or a host name.
    public var host: String
    /// 0 takes any free port; `HTTPServer.port` then says which.
    public var port: UInt16
    /// Connections served at once; one more is answered 503 and closed.
    public var maxConnections: Int
    /// Bytes of the request line and header fields together (431 past it; 414 when the request
    /// line alone does not fit).
    public var headerLimit: Int
    /// The whole head must arrive within this many seconds of its first byte (else 408).
    public var headerTimeout: TimeInterval
    /// Seconds a body may go without a byte (else 408).
    public var bodyIdleTimeout: TimeInterval
    /// The slowest a body may come, on average, once `bodyIdleTimeout` has passed (bytes/s):
    /// a client trickling a byte just within every idle timeout is given up on too.
    public var bodyMinimumRate: Double = 16 * 1024
    /// Seconds a kept-alive connection may wait for its next request (then closed, silently).
    public var keepAliveIdleTimeout: TimeInterval
    /// Seconds a response may take to be taken by the peer.
    public var writeTimeout: TimeInterval
    /// After a refusal whose body was not read: how long the unread bytes are drained before
    /// closing, so the peer reads the answer instead of a reset.
    public var lingerTimeout: TimeInterval
    /// Stack of each connection's thread.
    public var threadStackSize: Int

    public init(host: String = "127.0.0.1", port: UInt16 = 8484, maxConnections: Int = 256,
                headerLimit: Int = 64 * 1024, headerTimeout: TimeInterval = 10,
                bodyIdleTimeout: TimeInterval = 10, keepAliveIdleTimeout: TimeInterval = 15,
                writeTimeout: TimeInterval = 30, lingerTimeout: TimeInterval = 2,
                threadStackSize: Int = 1 << 20) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.headerLimit = headerLimit
        self.headerTimeout = headerTimeout
        self.bodyIdleTimeout = bodyIdleTimeout
        self.keepAliveIdleTimeout = keepAliveIdleTimeout
        self.writeTimeout = writeTimeout
        self.lingerTimeout = lingerTimeout
        self.threadStackSize = threadStackSize
    }
}
