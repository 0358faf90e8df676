import XCTest
@testable import CKRemote

/// The pacing a remote session keeps: a token bucket, and a budget for all its waiting.
final class PacingTests: XCTestCase {
    func testTheBucketSpacesRequestsAtTheRate() {
        var clock = 100.0
        var slept: [Double] = []
        let p = Pacer(PacingPolicy(rate: 4), sleep: { slept.append($0); clock += $0 }, now: { clock })
        for _ in 0..<5 { p.beforeRequest() }
        XCTAssertEqual(slept.count, 4)
        for s in slept { XCTAssertEqual(s, 0.25, accuracy: 1e-9) }
    }

    func testUnpacedNeverSleeps() {
        var slept = 0
        let p = Pacer(PacingPolicy(rate: nil), sleep: { _ in slept += 1 }, now: { 0 })
        for _ in 0..<100 { p.beforeRequest() }
        XCTAssertEqual(slept, 0)
    }

    func testWaitsStopAtTheBudget() {
        var total = 0.0
        let p = Pacer(PacingPolicy(rate: nil, maxWait: 10), sleep: { total += $0 }, now: { 0 })
        XCTAssertTrue(p.wait(6))
        XCTAssertFalse(p.wait(5), "past the budget: nothing waited")
        XCTAssertTrue(p.wait(4))
        XCTAssertEqual(total, 10)
    }

    func testBackoffDoublesWithJitterAndCaps() {
        XCTAssertEqual(Pacer.backoff(0, jitter: 0), 1)
        XCTAssertEqual(Pacer.backoff(3, jitter: 0), 8)
        XCTAssertEqual(Pacer.backoff(9, jitter: 0), 32)
        XCTAssertEqual(Pacer.backoff(1, jitter: 0.5), 3)
    }
}
