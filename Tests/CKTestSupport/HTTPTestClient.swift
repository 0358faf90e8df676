import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 client over a plain socket, for tests of `ck serve`: it sends exactly the
/// bytes it is given (so malformed requests can be sent too) and reads one answer, by its
/// Content-Length. No URLSession: a fresh machine with only the Swift toolchain runs it.
public final class HTTPTestClient {
    public struct Answer {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]

        public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        public var text: String { String(decoding: body, as: UTF8.self) }
        /// The body as JSON (nil when it is not).
        public var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }
        public subscript(key: String) -> Any? { (json as? [String: Any])?[key] }
    }

    public enum Failure: Error { case connect(Int32), closed, timeout, malformed(String) }

    let fd: Int32
    private var buffer: [UInt8] = []
    public let port: UInt16

    public init(port: UInt16, timeout: Double = 40) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard r == 0 else { let e = errno; close(fd); throw Failure.connect(e) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends raw bytes.
    public func send(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure.closed }
            off += n
        }
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// A request with the usual headers: Host, Content-Length when there is a body.
    public func request(_ method: String, _ target: String, body: [UInt8]? = nil, headers: [(String, String)] = []) throws -> Answer {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let b = body { head += "Content-Length: \(b.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + (body ?? []))
        return try readAnswer(head: method == "HEAD")
    }

    public func request(_ method: String, _ target: String, json: String, headers: [(String, String)] = []) throws -> Answer {
        try request(method, target, body: Array(json.utf8), headers: [("Content-Type", "text/plain")] + headers)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { throw Failure.closed }
        if n < 0 { throw errno == EAGAIN || errno == EWOULDBLOCK ? Failure.timeout : Failure.closed }
        buffer += chunk[0..<n]
    }

    /// Reads one answer (a `100 Continue` is returned like any other).
    public func readAnswer(head: Bool = false) throws -> Answer {
        var end: Int?
        while end == nil {
            if let r = findHeadEnd() { end = r } else { try fill() }
        }
        let headText = String(decoding: buffer[0..<end!], as: UTF8.self)
        buffer.removeFirst(end! + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed(headText) }
        let headers = lines.compactMap { l -> (String, String)? in
            guard let c = l.firstIndex(of: ":") else { return nil }
            return (String(l[..<c]), l[l.index(after: c)...].trimmingCharacters(in: .whitespaces))
        }
        let length = head || status == 100 || status == 204 ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        while buffer.count < length { try fill() }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return Answer(status: status, headers: headers, body: body)
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 { return i }
        return nil
    }

    /// Whether the server closed the connection (reads to the end).
    public func isClosedByServer() -> Bool {
        do { while true { try fill() } } catch Failure.closed { return true } catch { return false }
    }
}
