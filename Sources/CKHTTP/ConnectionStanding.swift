import Synchronization

/// Whether a connection waits for a request's head (and since when), is busy with one, or was
/// closed to make room: read and changed by its own thread on every request without the
/// server's lock, which sixteen busy connections would otherwise queue on. The server evicts
/// only under its lock, and only a connection still waiting since the instant it saw (a
/// compare-and-exchange), so a connection that has just begun a request is never taken.
final class ConnectionStanding: Sendable {
    private static let busy: UInt64 = 0
    private static let evicted: UInt64 = .max
    /// `busy`, `evicted`, or the instant (monotonic nanoseconds, never 0) it began to wait.
    private let word: Atomic<UInt64>

    init(waitingSince: Instant) {
        word = Atomic(Self.waiting(waitingSince))
    }

    private static func waiting(_ since: Instant) -> UInt64 { min(max(since, 1), evicted - 1) }

    /// Since when the connection waits for a request's head; nil when busy or evicted.
    var waitingSince: Instant? {
        let w = word.load(ordering: .acquiring)
        return w == Self.busy || w == Self.evicted ? nil : w
    }

    var isEvicted: Bool { word.load(ordering: .acquiring) == Self.evicted }

    /// A request's head arrived: busy. False when the connection was evicted meanwhile (its
    /// socket is shut down): the request must not be answered, nor acted on.
    @discardableResult
    func markBusy() -> Bool {
        var w = word.load(ordering: .acquiring)
        while w != Self.busy, w != Self.evicted {
            let (done, now) = word.compareExchange(expected: w, desired: Self.busy, ordering: .acquiringAndReleasing)
            if done { return true }
            w = now
        }
        return w == Self.busy
    }

    /// Waiting for the next request's head from `since` (kept when it already waits).
    func markWaiting(since: Instant) {
        _ = word.compareExchange(expected: Self.busy, desired: Self.waiting(since), ordering: .acquiringAndReleasing)
    }

    /// Takes the connection to close it, when it still waits since `since`; false when it has
    /// begun a request (or was taken) meanwhile.
    func evict(ifWaitingSince since: Instant) -> Bool {
        word.compareExchange(expected: Self.waiting(since), desired: Self.evicted, ordering: .acquiringAndReleasing).exchanged
    }
}
