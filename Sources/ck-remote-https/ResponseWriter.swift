#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An answer to write on stdout: always with Content-Length, so ck reads exactly the body.
struct RelayedResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// What the helper says itself: a refusal, or a request it could not carry.
    static func text(_ status: Int, _ message: String, transportError kind: TransportFailure.Kind) -> RelayedResponse {
        RelayedResponse(status: status,
                        headers: [("Content-Type", "text/plain; charset=utf-8"), ("X-CK-Transport-Error", kind.rawValue)],
                        body: Array((message + "\n").utf8))
    }

    /// Headers that describe the connection or the encoding the helper undid, not the body ck
    /// receives; Content-Length is written anew for the body as delivered.
    static let droppedHeaders: Set<String> = ["transfer-encoding", "content-encoding", "connection", "keep-alive", "content-length"]

    func encoded() -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers where !Self.droppedHeaders.contains(name.lowercased()) {
            // A value can never end the head early.
            let clean = value.filter { $0 != "\r" && $0 != "\n" }
            head += "\(name): \(clean)\r\n"
        }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// RFC 9110's reason phrases; ck reads the number only.
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 421: "Misdirected Request"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}

/// Writes every byte to a descriptor (stdout); false when the reader went away.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var sent = 0
    while sent < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        sent += n
    }
    return true
}
