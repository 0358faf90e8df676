import Foundation
import XCTest
@testable import CKStore

/// A lock is on a file: one replaced or moved away while a process waits for it guards
/// nothing, so the waiter takes the lock again on the file now at the path (FileLock).
final class FileLockTests: XCTestCase {
    private func waitingFor(_ path: String) -> (lock: () -> FileLock?, done: DispatchSemaphore) {
        nonisolated(unsafe) var taken: FileLock?
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            taken = try? FileLock(path: path)
            done.signal()
        }
        usleep(50_000)
        return ({ taken }, done)
    }

    func testALockFileReplacedWhileWaitingIsLockedAgainAtItsPath() throws {
        let t = TempStore()
        let path = t.root + "/locks/zone.lock"
        let first = try FileLock(path: path)
        let waiter = waitingFor(path)
        // Replaced by a new file (a zone deleted and made again), then the old one let go.
        let fresh = t.root + "/locks/.fresh"
        XCTAssertTrue(FileManager.default.createFile(atPath: fresh, contents: nil))
        XCTAssertEqual(rename(fresh, path), 0)
        first.unlock()
        XCTAssertEqual(waiter.done.wait(timeout: .now() + 5), .success)
        let held = try XCTUnwrap(waiter.lock())
        XCTAssertNil(try FileLock.attempt(path), "the waiter holds the lock of the file now at the path")
        held.unlock()
        XCTAssertNotNil(try FileLock.attempt(path))
    }

    /// Longer than PATH_MAX, which a path walked a component at a time allows: `lstat` cannot
    /// take it, and the lock is checked as it was opened (it once took the lock again for ever).
    func testALockWhosePathIsLongerThanPathMaxIsTaken() throws {
        let t = TempStore()
        let path = t.root + String(repeating: "/" + String(repeating: "d", count: 250), count: 18) + "/zone.lock"
        XCTAssertGreaterThan(path.utf8.count, Int(PATH_MAX))
        nonisolated(unsafe) var outcome: Result<FileLock, Error>?
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            outcome = Result { try FileLock(path: path) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "still taking the lock")
        let held = try XCTUnwrap(outcome).get()
        XCTAssertNil(try FileLock.attempt(path))
        held.unlock()
    }

    func testALockWhoseDirectoryMovedWhileWaitingIsLockedAgainAtItsPath() throws {
        let t = TempStore()
        let path = t.root + "/db/lock"
        let first = try FileLock(path: path)
        let waiter = waitingFor(path)
        XCTAssertEqual(rename(t.root + "/db", t.root + "/trash"), 0)
        try FileManager.default.createDirectory(atPath: t.root + "/db", withIntermediateDirectories: false)
        first.unlock()
        XCTAssertEqual(waiter.done.wait(timeout: .now() + 5), .success)
        let held = try XCTUnwrap(waiter.lock())
        XCTAssertNil(try FileLock.attempt(path), "the waiter holds the lock of the file now at the path")
        XCTAssertNotNil(try FileLock.attempt(t.root + "/trash/lock"), "not the moved one's")
        held.unlock()
    }
}
