import XCTest
@testable import CKCore
import CKTestSupport

/// A change token ahead of the history (a store restored from an older copy meets such tokens)
/// names changes that never happened here: accepting it would make a client silently skip the
/// next changes. Both feeds refuse it (issue 30, item 11), as a token the server never issued
/// for this history: BAD_REQUEST, nothing changed.
final class FutureChangeTokenTests: XCTestCase {
    private func zone() throws -> (TempStore, Database, ZoneStore) {
        let t = TempStore()
        let db = try t.db()
        _ = try db.createZone("Z")
        for i in 0..<3 { _ = try db.modify(zone: "Z", operations: [op(.create, "r\(i)")]) }
        return (t, db, try db.zone("Z"))
    }

    private func assertRefused(_ body: @autoclosure () throws -> Any, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { e in
            let code = (e as? CloudKitError)?.code
            XCTAssertTrue(code == .badRequest || code == .changeTokenExpired, "\(e)", file: file, line: line)
        }
    }

    func testAZoneTokenOneAheadOfTheHeadIsRefused() throws {
        let (t, db, z) = try zone()
        let head = try z.history.head()
        let secret = try db.tokenSecret.getOrCreate()
        let atHead = ChangeToken(kind: .zone, scopeKey: db.zoneScopeKey(z), seq: head, epoch: try z.history.epoch()).encode(secret: secret)
        XCTAssertTrue(try db.zoneChanges(zone: "Z", since: atHead).changes.isEmpty, "the head's own token is good")
        for ahead in [head + 1, head + 2, Int64.max] {
            let token = ChangeToken(kind: .zone, scopeKey: db.zoneScopeKey(z), seq: ahead, epoch: try z.history.epoch()).encode(secret: secret)
            let before = t.snapshot()
            assertRefused(try db.zoneChanges(zone: "Z", since: token))
            XCTAssertEqual(t.snapshot(), before)
        }
        // A from-scratch token whose origin lies ahead of the head, too.
        let origin = ChangeToken(kind: .zone, scopeKey: db.zoneScopeKey(z), seq: 1, epoch: try z.history.epoch(), origin: head + 1).encode(secret: secret)
        assertRefused(try db.zoneChanges(zone: "Z", since: origin))
        // Through the API, as `zone changes --since` and changes/zone send it.
        let api = api(t.root)
        let caller = caller(device: "d")
        let ahead = ChangeToken(kind: .zone, scopeKey: db.zoneScopeKey(z), seq: head + 1, epoch: try z.history.epoch()).encode(secret: secret)
        let answer = try api.zoneChanges(ZoneChangesRequest(zones: [.init(zoneName: "Z", syncToken: ahead)]), as: caller)
        XCTAssertEqual(answer.failures.map(\.code), [.badRequest], "the zone's entry is its error")
    }

    func testADatabaseTokenOneAheadOfTheHeadIsRefused() throws {
        let (t, db, _) = try zone()
        let head = try db.databaseHistory.head()
        let secret = try db.tokenSecret.getOrCreate()
        let atHead = ChangeToken(kind: .database, scopeKey: db.databaseScopeKey, seq: head).encode(secret: secret)
        XCTAssertTrue(try db.databaseChanges(since: atHead).zones.isEmpty)
        for ahead in [head + 1, Int64.max] {
            let token = ChangeToken(kind: .database, scopeKey: db.databaseScopeKey, seq: ahead).encode(secret: secret)
            let before = t.snapshot()
            assertRefused(try db.databaseChanges(since: token))
            XCTAssertEqual(t.snapshot(), before)
        }
        let api = api(t.root)
        let caller = caller(device: "d")
        let ahead = ChangeToken(kind: .database, scopeKey: db.databaseScopeKey, seq: head + 1).encode(secret: secret)
        assertRefused(try api.databaseChanges(DatabaseChangesRequest(syncToken: ahead), as: caller))
    }
}
