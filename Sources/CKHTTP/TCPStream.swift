import Glibc

/// A TCP connection as an `HTTPByteStream`: an IPv4 or IPv6 literal, or a name resolved with
/// getaddrinfo, each of its addresses tried in turn. Non-blocking underneath: every wait is a
/// poll(2) bounded by a time, and a peer that went away fails a write (MSG_NOSIGNAL) instead of
/// killing the process with SIGPIPE.
public final class TCPStream: HTTPByteStream {
    private var fd: Int32
    /// `127.0.0.1:8484`, `[::1]:8484`: for messages.
    public let peer: String
    /// Seconds a write may wait for the peer to take a byte.
    public var writeTimeout: Double = 60

    private init(fd: Int32, peer: String) {
        self.fd = fd
        self.peer = peer
    }

    deinit { close() }

    /// Connects within `timeout` seconds, or throws `HTTPClientError` `.connect` naming the
    /// host, the port and why.
    public static func connect(host: String, port: Int, timeout: Double) throws -> TCPStream {
        let name = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        func failure(_ why: String) -> HTTPClientError { HTTPClientError(.connect, "cannot connect to \(name): \(why)") }
        guard (1...65535).contains(port) else { throw failure("the port is not between 1 and 65535") }
        // A bracketed IPv6 literal, as a URL writes it, is the address inside.
        var address = host
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw failure("cannot resolve the host: " + String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var candidates: [addrinfo] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            candidates.append(entry.pointee)
            cursor = entry.pointee.ai_next
        }
        let deadline = instant(after: timeout)
        var lastFailure = "no address"
        for (index, candidate) in candidates.enumerated() {
            // Each address gets its share of what time is left, so one that never answers
            // leaves the others a chance.
            let left = Double(deadline &- min(now(), deadline)) / 1_000_000_000
            let share = left / Double(candidates.count - index)
            switch attempt(candidate, until: instant(after: share)) {
            case .success(let fd): return TCPStream(fd: fd, peer: name)
            case .failure(let why): lastFailure = why.description
            }
        }
        throw failure(lastFailure)
    }

    private static func attempt(_ candidate: addrinfo, until deadline: Instant) -> Result<Int32, ConnectFailure> {
        let fd = socket(candidate.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failure(ConnectFailure(errno)) }
        var on: Int32 = 1
        // Requests are written whole: no reason to wait for an acknowledgement before the next.
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        if Glibc.connect(fd, candidate.ai_addr, candidate.ai_addrlen) == 0 { return .success(fd) }
        guard errno == EINPROGRESS || errno == EINTR else {
            let code = errno
            Glibc.close(fd)
            return .failure(ConnectFailure(code))
        }
        let revents = HTTPSocket(fd: fd).wait(Int16(POLLOUT), until: deadline)
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if revents == 0 {
            code = ETIMEDOUT
        } else if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 {
            code = errno
        }
        guard code == 0 else {
            Glibc.close(fd)
            return .failure(ConnectFailure(code))
        }
        return .success(fd)
    }

    private struct ConnectFailure: Error, CustomStringConvertible {
        let description: String
        init(_ code: Int32) {
            description = code == ETIMEDOUT ? "no answer in time" : String(cString: strerror(code))
        }
    }

    public func write(_ bytes: [UInt8]) throws {
        guard fd >= 0 else { throw HTTPClientError(.closed, "the connection to \(peer) is closed") }
        var deadline = instant(after: writeTimeout)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                sent += n
                deadline = instant(after: writeTimeout)
                continue
            }
            let code = n < 0 ? errno : EPIPE
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw lost(code) }
            // The timeout is between bytes taken (progress restarts it), not for them all.
            let revents = HTTPSocket(fd: fd).wait(Int16(POLLOUT), until: deadline)
            if revents == 0 {
                throw HTTPClientError(.timedOut, "\(peer) took no bytes of the request for \(seconds(writeTimeout))")
            }
        }
    }

    public func read(maxCount: Int, timeout: Double) throws -> [UInt8] {
        guard fd >= 0 else { throw HTTPClientError(.closed, "the connection to \(peer) is closed") }
        let deadline = instant(after: timeout)
        let count = max(1, maxCount)
        while true {
            var code: Int32 = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                let n = recv(fd, buffer.baseAddress, count, 0)
                initialized = max(0, n)
                if n < 0 { code = errno }
            }
            if code == 0 { return bytes }  // empty: the peer closed
            switch code {
            // A reset is an end too: whether the peer's close came as FIN or RST is a race
            // (unread bytes on its side), and the reader says what was missing either way.
            case ECONNRESET:
                return []
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                // Readable, hung up or failed: the next recv says which.
                if HTTPSocket(fd: fd).wait(Int16(POLLIN), until: deadline) == 0 {
                    throw HTTPClientError(.timedOut, "\(peer) sent nothing for \(seconds(timeout))")
                }
            default:
                throw lost(code)
            }
        }
    }

    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    private func lost(_ code: Int32) -> HTTPClientError {
        HTTPClientError(.closed, "the connection to \(peer) failed: " + String(cString: strerror(code)))
    }

    private func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
