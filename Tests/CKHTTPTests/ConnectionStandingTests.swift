import XCTest
@testable import CKHTTP

/// A connection's standing is changed by its own thread without the server's lock, and the
/// server evicts only one still waiting since the instant it saw: a connection that has begun a
/// request meanwhile is never taken, and one taken stays taken.
final class ConnectionStandingTests: XCTestCase {
    func testOnlyAConnectionStillWaitingSinceTheInstantSeenIsEvicted() {
        let s = ConnectionStanding(waitingSince: 100)
        XCTAssertEqual(s.waitingSince, 100)
        // A head arrives: busy, no longer a candidate, and an eviction decided on the old
        // standing fails.
        XCTAssertTrue(s.markBusy())
        XCTAssertTrue(s.markBusy(), "busy already: still its own")
        XCTAssertNil(s.waitingSince)
        XCTAssertFalse(s.evict(ifWaitingSince: 100))
        XCTAssertFalse(s.isEvicted)
        // Waiting again, since a later instant: an eviction decided on the earlier one fails.
        s.markWaiting(since: 200)
        XCTAssertEqual(s.waitingSince, 200)
        XCTAssertFalse(s.evict(ifWaitingSince: 100))
        XCTAssertTrue(s.evict(ifWaitingSince: 200))
        XCTAssertTrue(s.isEvicted)
        XCTAssertNil(s.waitingSince)
        // Once taken, neither a head nor a wait brings it back, and the head's request is not
        // to be acted on.
        XCTAssertFalse(s.markBusy())
        s.markWaiting(since: 300)
        XCTAssertTrue(s.isEvicted)
        XCTAssertFalse(s.evict(ifWaitingSince: 300))
    }

    /// A connection's own thread and an evicting server, racing: exactly one wins — the
    /// connection goes on with its request, or the server takes it and the connection is told.
    func testABusyConnectionAndAnEvictingServerNeverBothWin() {
        for round in 0..<2_000 {
            let since = UInt64(round + 1)
            let s = ConnectionStanding(waitingSince: since)
            var evicted = false, busy = false
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                if i == 0 { busy = s.markBusy() } else { evicted = s.evict(ifWaitingSince: since) }
            }
            XCTAssertNotEqual(busy, evicted)
            XCTAssertEqual(s.isEvicted, evicted)
            XCTAssertNil(s.waitingSince)
        }
    }
}
