import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// A server that says exactly what its test scripts, byte for byte: odd and hostile answers the
/// engine never gives. Connections are accepted one after another; the n-th runs `scripts[n]`
/// (a connection past the last is closed at once).
final class ScriptedHTTPPeer: @unchecked Sendable {
    private let listener: Int32
    let port: UInt16
    private let lock = NSLock()
    private var _accepted = 0
    private var _requests: [String] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    /// Connections accepted so far.
    var accepted: Int { lock.withLock { _accepted } }
    /// Every request head read, in order (the wire text).
    var requests: [String] { lock.withLock { _requests } }

    init(_ scripts: [(PeerConnection) -> Void]) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            Glibc.close(fd)
            throw HTTPClientError(.connect, "the scripted peer cannot listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            defer { finished.signal() }
            var index = 0
            while true {
                var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                if poll(&fds, 1, 20) <= 0 {
                    if lock.withLock({ stopping }) { return }
                    continue
                }
                let fd = accept(listener, nil, nil)
                if fd < 0 { continue }
                lock.withLock { _accepted += 1 }
                let connection = PeerConnection(fd: fd) { [self] head in lock.withLock { _requests.append(head) } }
                if index < scripts.count { scripts[index](connection) }
                connection.close()
                index += 1
            }
        }
        thread.start()
    }

    /// Stops accepting and waits for the script running to end.
    func stop() {
        lock.withLock { stopping = true }
        finished.wait()
        Glibc.close(listener)
    }
}

/// One accepted connection, blocking, for a script.
final class PeerConnection {
    private var fd: Int32
    private var pending: [UInt8] = []
    private let record: (String) -> Void

    init(fd: Int32, record: @escaping (String) -> Void) {
        self.fd = fd
        self.record = record
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next request's head (recorded) and its body by Content-Length; nil when the client
    /// closed first.
    @discardableResult
    func readRequest() -> (head: String, body: [UInt8])? {
        let terminator = Array("\r\n\r\n".utf8)
        var end: Int?
        while true {
            if pending.count >= 4, let i = (0...(pending.count - 4)).first(where: { pending[$0..<($0 + 4)].elementsEqual(terminator) }) {
                end = i + 4
                break
            }
            guard receive() else { return nil }
        }
        let head = String(decoding: pending[0..<end!], as: UTF8.self)
        pending.removeFirst(end!)
        record(head)
        let length = head.split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        while pending.count < length { guard receive() else { return nil } }
        let body = Array(pending.prefix(length))
        pending.removeFirst(length)
        return (head, body)
    }

    /// Reads until the client closes (or 5 s pass).
    func readUntilClosed() { while receive() { pending.removeAll() } }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Each byte in a write of its own: the client must put the answer together from pieces.
    func trickle(_ text: String) {
        for byte in text.utf8 { send([byte]) }
    }

    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    private func receive() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { return false }
        pending += chunk[0..<n]
        return true
    }
}

extension XCTestCase {
    /// A peer running `scripts`, stopped when the test ends.
    func scriptedPeer(_ scripts: [(PeerConnection) -> Void]) throws -> ScriptedHTTPPeer {
        let peer = try ScriptedHTTPPeer(scripts)
        addTeardownBlock { peer.stop() }
        return peer
    }

    /// A client of `port` on 127.0.0.1.
    func httpClient(port: UInt16, limits: HTTPClientLimits = HTTPClientLimits(timeout: 2)) -> HTTPClient {
        HTTPClient(connect: { try TCPStream.connect(host: "127.0.0.1", port: Int(port), timeout: 2) },
                   host: "127.0.0.1:\(port)", limits: limits)
    }

    /// The `HTTPClientError` `body` throws, asserted to be of `kind`.
    @discardableResult
    func assertClientError(_ kind: HTTPClientError.Kind, _ body: () throws -> Any,
                           file: StaticString = #filePath, line: UInt = #line) -> HTTPClientError? {
        do {
            let result = try body()
            XCTFail("expected a \(kind) error, got \(result)", file: file, line: line)
        } catch let error as HTTPClientError {
            XCTAssertEqual(error.kind, kind, "\(error.message)", file: file, line: line)
            return error
        } catch {
            XCTFail("expected an HTTPClientError, got \(error)", file: file, line: line)
        }
        return nil
    }
}
