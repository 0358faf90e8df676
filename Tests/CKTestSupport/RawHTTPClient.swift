import Foundation
import Glibc

/// A response as it came off the wire.
public struct RawResponse {
    public var status: Int
    public var statusLine: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public subscript(name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
}

/// A blocking client that writes raw bytes, so malformed requests can be sent, and reads
/// responses by their Content-Length.
public final class RawHTTPClient {
    public let fd: Int32
    private var pending: [UInt8] = []

    public init(host: String = "127.0.0.1", port: UInt16, timeout: TimeInterval = 5) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let entry = list?.pointee else {
            throw NSError(domain: "RawHTTPClient", code: 0, userInfo: [NSLocalizedDescriptionKey: "bad address \(host)"])
        }
        defer { freeaddrinfo(list) }
        fd = socket(entry.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard connect(fd, entry.ai_addr, entry.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw NSError(domain: "RawHTTPClient", code: Int(code), userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(code))])
        }
        setTimeout(timeout)
    }

    deinit { Glibc.close(fd) }

    public func setTimeout(_ seconds: TimeInterval) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - floor(seconds)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; return false }
            sent += n
        }
        return true
    }

    public var localAddress: sockaddr_storage {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return address
    }

    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// More bytes into `pending`; false at end of stream, reset or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { pending += chunk[0..<n]; return true }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// The next response; nil when the connection ends or times out before a whole one.
    public func readResponse(forHEAD: Bool = false) -> RawResponse? {
        let end = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            if pending.count >= 4, let i = (0...(pending.count - 4)).first(where: { pending[$0..<($0 + 4)].elementsEqual(end) }) {
                headEnd = i
            } else if !fill() { return nil }
        }
        let lines = String(decoding: pending[0..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        pending.removeFirst(headEnd! + 4)
        let parts = lines[0].split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        let headers = lines.dropFirst().map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = RawResponse(status: status, statusLine: lines[0], headers: headers, body: [])
        let length = (100...199).contains(status) || forHEAD ? 0 : Int(response["Content-Length"] ?? "0") ?? 0
        while pending.count < length { if !fill() { return nil } }
        response.body = Array(pending[0..<length])
        pending.removeFirst(length)
        return response
    }

    /// Everything until the peer closes (or the timeout).
    public func readToEnd() -> [UInt8] {
        while fill() {}
        defer { pending = [] }
        return pending
    }

    /// The peer closed the connection (end of stream or reset) with nothing more to read.
    public func isClosedByPeer() -> Bool {
        guard pending.isEmpty else { return false }
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n < 0 && errno == EINTR { continue }
            return n == 0 || (n < 0 && errno == ECONNRESET)
        }
    }
}
