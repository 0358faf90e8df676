import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// A change token ahead of the history (a store restored from an older copy meets such tokens)
/// names changes that never happened here: accepting it would make a client silently skip the
/// next changes. Both feeds refuse it (issue 30, item 11), as a token the server never issued
/// for this history: BAD_REQUEST, nothing changed.
final class FutureChangeTokenTests: XCTestCase {
    private func zone() throws -> (TempStore, APIClient) {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        for i in 0..<3 { _ = try db.modify(zone: "Z", operations: [op(.create, "r\(i)")]) }
        return (t, db)
    }

    private func assertRefused(_ body: @autoclosure () throws -> Any, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { e in
            let code = (e as? CloudKitError)?.code
            XCTAssertTrue(code == .badRequest || code == .changeTokenExpired, "\(e)", file: file, line: line)
        }
    }

    func testAZoneTokenOneAheadOfTheHeadIsRefused() throws {
        let (t, db) = try zone()
        let head = try db.head(zone: "Z")
        XCTAssertEqual(head, 3)
        XCTAssertTrue(try db.zoneChanges(zone: "Z", since: try t.token(zone: "Z", seq: head)).changes.isEmpty, "the head's own token is good")
        for ahead in [head + 1, head + 2, Int64.max] {
            let token = try t.token(zone: "Z", seq: ahead)
            let before = t.snapshot()
            assertRefused(try db.zoneChanges(zone: "Z", since: token))
            XCTAssertEqual(t.snapshot(), before)
        }
        // A from-scratch token whose origin lies ahead of the head, too.
        assertRefused(try db.zoneChanges(zone: "Z", since: try t.token(zone: "Z", seq: 1, origin: head + 1)))
        // The zone's entry of the answer is its error, as changes/zone sends it.
        let answer = try t.api.zoneChanges(ZoneChangesRequest(zones: [.init(zoneName: "Z", syncToken: try t.token(zone: "Z", seq: head + 1))]), as: caller(device: "d"))
        XCTAssertEqual(answer.failures.map(\.code), [.badRequest], "the zone's entry is its error")
    }

    func testADatabaseTokenOneAheadOfTheHeadIsRefused() throws {
        let (t, db) = try zone()
        let head = try t.databaseHead()
        XCTAssertTrue(try db.databaseChanges(since: try t.token(zone: nil, seq: head)).zones.isEmpty)
        for ahead in [head + 1, Int64.max] {
            let token = try t.token(zone: nil, seq: ahead)
            let before = t.snapshot()
            assertRefused(try db.databaseChanges(since: token))
            XCTAssertEqual(t.snapshot(), before)
        }
    }
}
