import Dispatch
import Glibc

/// A monotonic instant in nanoseconds: deadlines must not move with the wall clock.
typealias Instant = UInt64

func now() -> Instant { DispatchTime.now().uptimeNanoseconds }

func instant(after seconds: Double, from start: Instant = now()) -> Instant {
    start &+ UInt64(max(0, seconds) * 1_000_000_000)
}

func milliseconds(since start: Instant) -> Double { Double(now() &- start) / 1_000_000 }

/// Bytes received and not yet parsed. Consumed from the front; compacted when half is spent.
struct ReadBuffer {
    private var storage: [UInt8] = []
    private var start = 0

    var count: Int { storage.count - start }
    var isEmpty: Bool { count == 0 }
    var bytes: ArraySlice<UInt8> { storage[start...] }

    mutating func append(_ chunk: UnsafeRawBufferPointer) { storage.append(contentsOf: chunk) }

    /// Room for `n` more bytes at once, for a body of known length.
    mutating func reserve(_ n: Int) { storage.reserveCapacity(storage.count + n) }

    mutating func consume(_ n: Int) {
        start += min(n, count)
        if start == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 256 * 1024)
            start = 0
        } else if start > 64 * 1024 && start * 2 > storage.count {
            storage.removeFirst(start)
            start = 0
        }
    }

    /// Removes and returns the first `n` bytes.
    mutating func take(_ n: Int) -> [UInt8] {
        let taken = Array(storage[start..<(start + min(n, count))])
        consume(n)
        return taken
    }
}

enum ReceiveOutcome { case data, closed, timedOut, interrupted }

/// A connected, non-blocking socket. Every wait is a poll() bounded by a deadline, so a stalled
/// peer costs its own thread a timeout and nobody else anything.
struct HTTPSocket {
    let fd: Int32

    /// Waits for `events` on the socket until `deadline`; `interrupt` (a pipe's read end) ends
    /// the wait early once it is readable. Returns the socket's revents, 0 on timeout, -1 when
    /// interrupted.
    func wait(_ events: Int16, until deadline: Instant, interrupt: Int32? = nil) -> Int16 {
        while true {
            let current = now()
            if current >= deadline { return 0 }
            let remaining = (deadline - current + 999_999) / 1_000_000
            let timeout = Int32(min(remaining, UInt64(Int32.max)))
            var fds = [pollfd(fd: fd, events: events, revents: 0)]
            if let interrupt { fds.append(pollfd(fd: interrupt, events: Int16(POLLIN), revents: 0)) }
            let result = poll(&fds, nfds_t(fds.count), timeout)
            if result < 0 {
                if errno == EINTR { continue }
                return Int16(POLLERR)
            }
            if result == 0 { continue }  // the loop re-checks the deadline
            if fds.count > 1 && fds[1].revents != 0 { return -1 }
            if fds[0].revents != 0 { return fds[0].revents }
        }
    }

    /// Reads what is there (at least one byte) into `buffer`.
    func receive(into buffer: inout ReadBuffer, until deadline: Instant, interrupt: Int32? = nil) -> ReceiveOutcome {
        while true {
            // On the stack: no allocation per read.
            let n = withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { chunk -> Int in
                let n = recv(fd, chunk.baseAddress, chunk.count, 0)
                if n > 0 { buffer.append(UnsafeRawBufferPointer(rebasing: chunk[0..<n])) }
                return n
            }
            if n > 0 { return .data }
            if n == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                let revents = wait(Int16(POLLIN), until: deadline, interrupt: interrupt)
                if revents == 0 { return .timedOut }
                if revents == -1 { return .interrupted }
                // Readable, hung up or failed: the next recv says which.
            default: return .closed
            }
        }
    }

    /// Writes all of `bytes` or gives up at `deadline` or when the peer is gone.
    @discardableResult
    func send(_ bytes: [UInt8], until deadline: Instant) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                let revents = wait(Int16(POLLOUT), until: deadline)
                if revents == 0 || revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && revents & Int16(POLLOUT) == 0 { return false }
                continue
            }
            return false
        }
        return true
    }

    /// Sends what fits without waiting (a short refusal into an empty socket buffer).
    func sendNow(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// Ends our side, then reads and drops what the peer still sends until it closes or the
    /// deadline passes: closing with unread bytes would reset the connection and could destroy
    /// the answer before the peer reads it.
    func drain(until deadline: Instant) {
        shutdown(fd, Int32(SHUT_WR))
        var sink = ReadBuffer()
        while receive(into: &sink, until: deadline) == .data {
            sink.consume(sink.count)
        }
    }

    /// Drops whatever already arrived, without waiting, then closes.
    func closeNow() {
        shutdown(fd, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 4096)
        while scratch.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        close(fd)
    }
}
