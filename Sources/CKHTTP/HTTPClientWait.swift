import Glibc

/// How a handler that answers late (a long-poll) waits: in poll(2) on a descriptor of its own
/// choosing, the client's socket and the server's stop signal together, so the wait costs no
/// CPU and ends as soon as the client hangs up or the server stops, not when its time is up.
/// The engine knows nothing of what the handler waits for.
public struct HTTPClientWait: Sendable {
    /// The client's socket (-1: none, as for a request made in a test).
    let socket: Int32
    /// Readable once the server is stopping (-1: none).
    let stopSignal: Int32

    /// A wait that watches neither a client nor a server: only the handler's descriptor and
    /// the time.
    public static let detached = HTTPClientWait(socket: -1, stopSignal: -1)

    public enum Outcome: Sendable, Equatable {
        /// `wake` turned readable.
        case woken
        case timedOut
        /// The client closed its side of the connection (or it failed): nobody waits for the answer.
        case clientGone
        case stopping
    }

    /// Linux's "the peer shut down its writing half" (poll.h hides it behind _GNU_SOURCE).
    static let peerHungUp = Int16(0x2000)

    /// Waits until `wake` is readable (it is not read: the handler drains it), `seconds` pass,
    /// the client goes away or the server stops — whichever comes first. The socket is watched
    /// for its hang-up only: bytes a client pipelines meanwhile wait in the kernel.
    public func wait(for wake: Int32, seconds: Double) -> Outcome {
        let deadline = instant(after: seconds)
        while true {
            let current = now()
            if current >= deadline { return .timedOut }
            let timeout = Int32(min((deadline - current + 999_999) / 1_000_000, UInt64(Int32.max)))
            // poll(2) skips entries whose descriptor is negative.
            var fds = [pollfd(fd: socket, events: Self.peerHungUp, revents: 0),
                       pollfd(fd: stopSignal, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                return .clientGone
            }
            if ready == 0 { continue }  // the loop re-checks the deadline
            if fds[1].revents != 0 { return .stopping }
            if fds[0].revents & (Self.peerHungUp | Int16(POLLHUP | POLLERR | POLLNVAL)) != 0 { return .clientGone }
            if fds[2].revents != 0 { return .woken }
        }
    }
}
