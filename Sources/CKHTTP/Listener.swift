import Glibc

/// Listening sockets for a host and port.
enum Listener {
    /// Binds and listens; returns the sockets and the port they share. `localhost` listens on
    /// both loopbacks (clients try either), IPv6 best effort; `::` takes IPv4 too.
    static func open(host: String, port: UInt16) throws -> ([Int32], UInt16) {
        let addresses = host == "localhost" ? ["127.0.0.1", "::1"] : [host]
        var fds: [Int32] = []
        var bound = port
        for (index, address) in addresses.enumerated() {
            do {
                let (fd, actual) = try bindOne(address, port: bound)
                fds.append(fd)
                bound = actual
            } catch where index > 0 {
                continue  // the second loopback of localhost is a bonus
            } catch {
                fds.forEach { _ = close($0) }
                throw error
            }
        }
        return (fds, bound)
    }

    private static func display(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func bindOne(_ host: String, port: UInt16) throws -> (Int32, UInt16) {
        func failure(_ what: String, _ code: Int32) -> HTTPServerError {
            HTTPServerError(message: "cannot listen on \(display(host, port)): \(what)\(code == 0 ? "" : String(cString: strerror(code)))", errorNumber: code)
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw failure("cannot resolve the host: " + String(cString: gai_strerror(status)), 0)
        }
        defer { freeaddrinfo(list) }
        // A name with both families: IPv4 first, as the loopback default is.
        var chosen = first.pointee
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if entry.pointee.ai_family == AF_INET { chosen = entry.pointee; break }
            cursor = entry.pointee.ai_next
        }
        let fd = socket(chosen.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("", errno) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if chosen.ai_family == AF_INET6 {
            // `::` takes IPv4 as well; `::1` and other v6 addresses are only themselves.
            var v6only: Int32 = host == "::" ? 0 : 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &v6only, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, chosen.ai_addr, chosen.ai_addrlen) == 0 else {
            let code = errno
            close(fd)
            throw failure("", code)
        }
        guard listen(fd, SOMAXCONN) == 0 else {
            let code = errno
            close(fd)
            throw failure("", code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Self.port(of: address))
    }

    static func port(of address: sockaddr_storage) -> UInt16 {
        var address = address
        let family = Int32(address.ss_family)
        return withUnsafePointer(to: &address) { pointer in
            switch family {
            case AF_INET: return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            case AF_INET6: return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            default: return 0
            }
        }
    }

    /// `127.0.0.1:53211`, `[::1]:53211`.
    static func describe(_ address: sockaddr_storage) -> String {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(address.ss_family)
        let ok: Bool = withUnsafePointer(to: &address) { pointer in
            switch family {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var a = sin.pointee.sin_addr
                    return inet_ntop(AF_INET, &a, &text, socklen_t(text.count)) != nil
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var a = sin6.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &a, &text, socklen_t(text.count)) != nil
                }
            default: return false
            }
        }
        guard ok else { return "" }
        return display(String(cString: text), port(of: address))
    }
}
