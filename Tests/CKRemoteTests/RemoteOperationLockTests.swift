import CKCore
import Foundation
import XCTest
@testable import CKRemote

/// One fetch, pull or push of a remote into a database at a time: a second waits, and says so.
final class RemoteOperationLockTests: XCTestCase {
    func testAPullWaitsForAnotherCommandOfTheSameRemoteAndSaysSo() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("a", ["n": 1])])
        let held = expectation(description: "another command holds the remote")
        let release = DispatchSemaphore(value: 0)
        let other = CloudKitAPI(dataDirectory: f.localRoot)
        let caller = f.localCaller()
        let thread = Thread {
            _ = try? other.withRemoteOperation("origin", as: caller, waiting: {}) {
                held.fulfill()
                release.wait()
            }
        }
        thread.start()
        wait(for: [held], timeout: 10)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { release.signal() }
        let start = Date()
        let r = try f.pull()
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.9, "the pull ran while another held the remote")
        XCTAssertTrue(f.notices.contains { $0.contains("waiting for another fetch, pull or push") }, "\(f.notices)")
        XCTAssertEqual(r.fetch.records, 1)
        // Another database of the same remote is not held up by it.
        let quick = Date()
        _ = try f.localAPI.withRemoteOperation("origin", as: f.localCaller(.public), waiting: { XCTFail("the public database waited for the private one") }) {}
        XCTAssertLessThan(Date().timeIntervalSince(quick), 0.5)
    }
}
