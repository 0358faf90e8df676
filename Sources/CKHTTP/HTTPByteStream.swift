/// A two-way byte stream an HTTP/1.1 client speaks over: a TCP socket to a server, or the
/// pipes of a helper process that carries the requests over TLS (ck stays one static
/// executable; the helper links the system's TLS). The client knows nothing else of it.
public protocol HTTPByteStream: AnyObject {
    /// Writes every byte or throws `HTTPClientError`.
    func write(_ bytes: [UInt8]) throws
    /// Reads at most `maxCount` bytes, waiting at most `timeout` seconds for the first;
    /// returns an empty array at the end of the stream; throws `HTTPClientError` on a
    /// failure or when the time is up.
    func read(maxCount: Int, timeout: Double) throws -> [UInt8]
    /// Closes the stream (idempotent); a helper process is waited for.
    func close()
}

/// Why a request over an `HTTPByteStream` got no answer. `message` never holds a request's
/// URL or headers: they may carry a session token.
public struct HTTPClientError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// No connection could be made (refused, unreachable, no such host, helper missing).
        case connect
        /// The peer sent nothing for longer than the timeout.
        case timedOut
        /// The peer closed the stream before a whole answer arrived.
        case closed
        /// The bytes received are not an HTTP/1.1 response.
        case malformed
        /// The answer exceeds a limit the client set.
        case tooLarge
        /// The TLS helper could not carry the request (certificate refused, TLS failure).
        case transport
    }
    public let kind: Kind
    public let message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}
