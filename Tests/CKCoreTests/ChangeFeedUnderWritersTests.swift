import CKModel
import CKTestSupport
import Dispatch
import Foundation
import XCTest
@testable import CKCore

/// Clients paging a zone's feed while writers save, update, delete and make records again end,
/// once the writers stop and the feed says moreComing is false, with exactly the zone's records
/// — every record, its fields and its change tag — whatever pages the changes fell on.
final class ChangeFeedUnderWritersTests: XCTestCase {
    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        private var errors: [String] = []
        var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
        func set() { lock.lock(); value = true; lock.unlock() }
        func fail(_ e: String) { lock.lock(); errors.append(e); lock.unlock() }
        var failures: [String] { lock.lock(); defer { lock.unlock() }; return errors }
    }

    /// One writer: `rounds` batches of 1–3 random operations on 24 names shared with the others.
    private func write(_ db: APIClient, rounds: Int, writer: Int64, failures: Flag) {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<rounds {
            let ops: [RecordOperation] = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                let name = "r\(Int.random(in: 0..<24, using: &rng))"
                return Int.random(in: 0..<4, using: &rng) == 0
                    ? op(.forceDelete, name)
                    : op(.forceUpdate, name, ["n": .int(Int64(round)), "w": .int(writer)])
            }
            do {
                for r in try db.modify(zone: "Z", operations: ops, atomic: false) {
                    if let e = r.error, e.code != .notFound { failures.fail("\(e)") }
                }
            } catch { failures.fail("\(error)") }
        }
    }

    /// Pages with `limit` until the writers are done and a page fetched after that says
    /// moreComing is false; a short pause between pages lets writes land in between.
    private func follow(_ db: APIClient, _ replica: inout FeedReplica, limit: Int, until writersDone: Flag) throws {
        while true {
            usleep(2_000)
            let done = writersDone.isSet
            let page = try db.zoneChanges(zone: "Z", since: replica.token, limit: limit)
            XCTAssertLessThanOrEqual(page.changes.count, limit)
            XCTAssertEqual(Set(changeNames(page)).count, page.changes.count, "a record at most once a page")
            replica.apply(page)
            if done && !page.moreComing { return }
        }
    }

    func testReplicasPagedDuringWritesEndEqualToTheStore() throws {
        let t = TempStore()
        let seed = t.client(caller(device: "w0"))
        try seed.createZone("Z")
        _ = try seed.modify(zone: "Z", operations: (0..<24).map { op(.create, "r\($0)", ["n": 0]) })
        // One client already in sync, one starting from scratch.
        var inSync = FeedReplica()
        try inSync.catchUp(t.client(caller(device: "r1")), zone: "Z", limit: 200)

        let done = Flag(), failures = Flag()
        let writers = DispatchGroup()
        for w in 1...3 {
            let db = t.client(caller(device: "w\(w)"))
            DispatchQueue.global().async(group: writers) { self.write(db, rounds: 60, writer: Int64(w), failures: failures) }
        }
        writers.notify(queue: .global()) { done.set() }
        final class Reader: @unchecked Sendable { var replica = FeedReplica(); var error: Error? }
        let scratch = Reader()
        let scratchDB = t.client(caller(device: "r2"))
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            do {
                // From scratch once the writers are under way: deletions before it began are
                // not its to hear of, those after are (reference §5.4).
                while try scratchDB.head(zone: "Z") < 60 && !done.isSet { usleep(1_000) }
                try self.follow(scratchDB, &scratch.replica, limit: 2, until: done)
            } catch { scratch.error = error }
        }
        try follow(t.client(caller(device: "r1")), &inSync, limit: 1, until: done)
        reading.wait()
        XCTAssertNil(scratch.error)
        XCTAssertEqual(failures.failures, [])
        let fromScratch = scratch.replica

        let store = try seed.records(zone: "Z")
        XCTAssertGreaterThan(inSync.pages.count, 10, "the client paged while the writers wrote")
        XCTAssertEqual(inSync.records, store, "the client that was in sync")
        XCTAssertEqual(fromScratch.records, store, "the client that started from scratch")
    }
}
