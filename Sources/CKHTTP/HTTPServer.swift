import Foundation
import Glibc
import Synchronization

/// Why the server could not start, naming the address: `cannot listen on 127.0.0.1:8484:
/// Address already in use`.
public struct HTTPServerError: Error, CustomStringConvertible, Equatable {
    public var message: String
    /// The errno of the failed call (0 when none says why).
    public var errorNumber: Int32 = 0
    public var description: String { message }

    /// Another socket holds the address (EADDRINUSE): a server already runs there.
    public var isAddressInUse: Bool { errorNumber == EADDRINUSE }
    /// The system does not let this process bind the address (EACCES: a port below 1024).
    public var isPermissionDenied: Bool { errorNumber == EACCES }
}

/// An HTTP/1.1 server on sockets: one thread accepts, one thread per connection serves (up to
/// `maxConnections`), and the handler turns requests into responses. It knows nothing of
/// CloudKit.
public final class HTTPServer: @unchecked Sendable {
    public let configuration: HTTPServerConfiguration
    private let handler: HTTPHandler

    private enum State { case idle, running, stopping, stopped }
    private let lock = NSCondition()
    private var state = State.idle
    /// `state == .running`, readable without the lock: every request asks.
    private let running = Atomic<Bool>(false)
    private var boundPort: UInt16 = 0
    private var listeners: [Int32] = []
    /// Open connections' sockets, so a stop past its grace can shut them down, and whether each
    /// waits for a request's head (none of it yet, or part), since when: at the cap, the one
    /// waiting longest is closed to make room, so idle sockets cannot lock others out.
    private var connections: [Int: (fd: Int32, standing: ConnectionStanding)] = [:]
    /// Connections closed to make room, until their threads end (not counted against the cap).
    private var evictedCount = 0
    private var nextConnectionID = 0
    /// A pipe whose read end turns readable, for good, when the server stops: it wakes the
    /// accept loop and every connection waiting idle for its next request.
    private var stopPipe: (read: Int32, write: Int32) = (-1, -1)
    private let acceptLoopEnded = DispatchSemaphore(value: 0)

    public init(configuration: HTTPServerConfiguration = HTTPServerConfiguration(), handler: HTTPHandler) {
        self.configuration = configuration
        self.handler = handler
    }

    deinit {
        if stopPipe.read >= 0 { Glibc.close(stopPipe.read); Glibc.close(stopPipe.write) }
    }

    /// The port listened on (the one chosen when the configuration said 0).
    public var port: UInt16 {
        lock.lock(); defer { lock.unlock() }
        return boundPort
    }

    /// Connections being served now.
    public var connectionCount: Int {
        lock.lock(); defer { lock.unlock() }
        return connections.count
    }

    /// Connections waiting for a request's head: those the next connection past the cap may
    /// displace.
    public var connectionsWaitingForHead: Int {
        lock.lock(); defer { lock.unlock() }
        return connections.values.filter { $0.standing.waitingSince != nil }.count
    }

    /// Binds, listens and starts accepting on a thread of its own. Throws `HTTPServerError`
    /// naming host:port when the address cannot be had.
    public func start() throws {
        lock.lock(); defer { lock.unlock() }
        guard state == .idle else { throw HTTPServerError(message: "the server has already been started") }
        // A peer that vanishes mid-write must fail the write, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        MemoryPolicy.applyOnce()
        let (fds, port) = try Listener.open(host: configuration.host, port: configuration.port)
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            fds.forEach { _ = Glibc.close($0) }
            throw HTTPServerError(message: "cannot start the server: \(String(cString: strerror(errno)))")
        }
        pipeFDs.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        listeners = fds
        boundPort = port
        stopPipe = (pipeFDs[0], pipeFDs[1])
        state = .running
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in acceptLoop() }
        thread.stackSize = 512 * 1024
        thread.name = "http-accept"
        thread.start()
    }

    /// Stops accepting, closes idle kept-alive connections, lets requests in flight finish for
    /// up to `grace` seconds, then shuts down the connections left. Returns when done.
    public func stop(grace: TimeInterval) {
        lock.lock()
        switch state {
        case .idle:
            state = .stopped
            lock.broadcast()
            lock.unlock()
            return
        case .stopping, .stopped:
            lock.unlock()
            waitUntilStopped()
            return
        case .running:
            state = .stopping
            running.store(false, ordering: .releasing)
            // Refuse new connections now, before idle ones are told to close: shutdown (not
            // close) so the accept loop's descriptors stay its own until it closes them.
            listeners.forEach { _ = shutdown($0, Int32(SHUT_RDWR)) }
            lock.unlock()
        }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        acceptLoopEnded.wait()

        let deadline = Date(timeIntervalSinceNow: grace)
        lock.lock()
        while !connections.isEmpty && lock.wait(until: deadline) {}
        // Past the grace: whatever is still reading, writing or waiting fails at once.
        for c in connections.values { shutdown(c.fd, Int32(SHUT_RDWR)) }
        state = .stopped
        lock.broadcast()
        lock.unlock()
    }

    /// Blocks until `stop(grace:)` has finished (at once when the server never started).
    public func waitUntilStopped() {
        lock.lock(); defer { lock.unlock() }
        while state == .running || state == .stopping { lock.wait() }
    }

    private var isStopping: Bool { !running.load(ordering: .acquiring) }

    private func acceptLoop() {
        defer {
            lock.lock()
            listeners.forEach { _ = Glibc.close($0) }
            listeners = []
            lock.unlock()
            acceptLoopEnded.signal()
        }
        let listening = lock.withLock { listeners }
        while true {
            var fds = [pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
                + listening.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents != 0 { return }
            for entry in fds.dropFirst() where entry.revents != 0 {
                acceptAll(entry.fd)
            }
        }
    }

    /// A connection starts or stops waiting for a request's head.
    /// Takes every pending connection on one listening socket.
    private func acceptAll(_ listener: Int32) {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listener, $0, &length)
                }
            }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: the pending connection stays queued; back off rather
                    // than spin on a listener that stays readable.
                    usleep(10_000)
                    return
                default: return
                }
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            admit(fd, remoteAddress: Listener.describe(address))
        }
    }

    private func admit(_ fd: Int32, remoteAddress: String) {
        lock.lock()
        while connections.count - evictedCount >= configuration.maxConnections {
            // An idle connection gives way (HTTP lets a server close one at any time): its
            // thread sees the socket end and exits. One that began a request meanwhile is not
            // taken: the next oldest is tried.
            let waiting = connections.values.compactMap { c in c.standing.waitingSince.map { (c, $0) } }
            guard let (oldest, since) = waiting.min(by: { $0.1 < $1.1 }) else { break }
            if oldest.standing.evict(ifWaitingSince: since) {
                evictedCount += 1
                shutdown(oldest.fd, Int32(SHUT_RDWR))
            }
        }
        guard connections.count - evictedCount < configuration.maxConnections else {
            lock.unlock()
            // Over the cap: a short answer that fits the empty socket buffer, and close at once,
            // so neither this thread nor the peer waits.
            let started = now()
            let refusal = handler.refusal(status: 503, reason: "the server is serving \(configuration.maxConnections) connections; try again")
            let socket = HTTPSocket(fd: fd)
            socket.sendNow(refusal.encoded(omitBody: false, close: true))
            socket.closeNow()
            handler.log(nil, status: 503, milliseconds: milliseconds(since: started), note: refusal.logNote)
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let standing = ConnectionStanding(waitingSince: now())
        connections[id] = (fd, standing)
        lock.unlock()

        let connection = HTTPConnection(fd: fd, remoteAddress: remoteAddress, configuration: configuration, handler: handler,
                                        stopSignal: stopPipe.read, isStopping: { [unowned self] in isStopping },
                                        waitingForHead: { waiting in
                                            if waiting { standing.markWaiting(since: now()); return true }
                                            return standing.markBusy()
                                        })
        let thread = Thread { [self] in
            // Counted until closed, draining included, so the cap bounds the threads (beside
            // those closed to make room, which are ending).
            connection.run()
            lock.lock()
            connections[id] = nil
            if standing.isEvicted { evictedCount -= 1 }
            lock.broadcast()
            lock.unlock()
            connection.close()
        }
        thread.stackSize = configuration.threadStackSize
        thread.name = "http-connection"
        thread.start()
    }
}
