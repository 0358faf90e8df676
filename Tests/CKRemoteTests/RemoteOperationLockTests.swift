import CKCore
import CKModel
import Foundation
import XCTest
@testable import CKRemote

/// One fetch, pull or push of a remote into a database at a time: a second waits, and says so.
final class RemoteOperationLockTests: XCTestCase {
    /// Another command of `origin` in the local private database, as another process would run
    /// it, holding the remote until the semaphore is signalled.
    func holdRemote(_ f: RemoteFixture) throws -> DispatchSemaphore {
        let held = expectation(description: "another command holds the remote")
        let release = DispatchSemaphore(value: 0)
        let other = CloudKitAPI(dataDirectory: f.localRoot)
        let caller = f.localCaller()
        Thread {
            _ = try? other.withRemoteOperation("origin", as: caller, waiting: {}) {
                held.fulfill()
                release.wait()
            }
        }.start()
        wait(for: [held], timeout: 10)
        return release
    }

    func testAPullWaitsForAnotherCommandOfTheSameRemoteAndSaysSo() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("a", ["n": 1])])
        let release = try holdRemote(f)
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

    /// A remote is removed or renamed only while no command of it runs: its tracking is never
    /// moved or deleted under a pull, which would then write it back under the old name.
    func testARemoteIsNotRemovedOrRenamedWhileACommandOfItRuns() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("a", ["n": 1])])
        try f.pull()
        let release = try holdRemote(f)
        XCTAssertEqual((try? f.localAPI.removeRemote("origin")).map { _ in "removed" } ?? "refused", "refused")
        XCTAssertThrowsError(try f.localAPI.renameRemote("origin", to: "upstream")) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .tryAgainLater, "\(e)")
        }
        XCTAssertEqual(try f.localAPI.remote(named: "origin").name, "origin", "still there")
        release.signal()
        // Once it ends: renamed, its tracking with it.
        var renamed = false
        for _ in 0..<50 where !renamed {
            renamed = (try? f.localAPI.renameRemote("origin", to: "upstream")) != nil
            if !renamed { usleep(100_000) }
        }
        XCTAssertTrue(renamed)
        XCTAssertEqual(try f.localAPI.remoteTracking(RemoteZone(remote: "upstream", zoneName: "Lists"), as: f.localCaller()).fetched, 1)
        XCTAssertThrowsError(try f.localAPI.withRemoteOperation("origin", as: f.localCaller(), waiting: {}) {}, "the old name is gone")
    }
}
