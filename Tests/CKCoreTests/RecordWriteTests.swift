import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Record writes through records/modify and reads through records/lookup: each operation
/// type's rules, the limits, and who may write where.
final class RecordWriteTests: XCTestCase {
    func save(_ db: APIClient, _ o: RecordOperation, zone: String = "_defaultZone") throws -> OperationResult {
        try db.modify(zone: zone, operations: [o])[0]
    }

    func testCreateThenCreateAgainIsExistsWithServerRecord() throws {
        let t = TempStore()
        let db = t.client()
        let first = try save(db, op(.create, "a", ["n": 1]))
        XCTAssertEqual(first.record?.recordChangeTag, "1")
        let again = try save(db, op(.create, "a", ["n": 2]))
        XCTAssertEqual(again.error?.code, .exists)
        XCTAssertEqual(again.error?.serverRecord?.fields["n"]?.value, 1)
    }

    func testUpdateMergesAndIssuesNewTagConflictOnStaleTag() throws {
        let t = TempStore()
        let db = t.client()
        _ = try save(db, op(.create, "a", ["n": 1, "s": "x"]))
        let u = try save(db, op(.update, "a", type: nil, tag: "1", ["n": 2]))
        XCTAssertEqual(u.record?.recordChangeTag, "2")
        XCTAssertEqual(u.record?.fields["s"]?.value, "x", "update merges")
        XCTAssertEqual(u.record?.fields["n"]?.value, 2)
        let stale = try save(db, op(.update, "a", type: nil, tag: "1", ["n": 3]))
        XCTAssertEqual(stale.error?.code, .conflict)
        XCTAssertEqual(stale.error?.serverRecord?.recordChangeTag, "2")
        XCTAssertEqual(try db.lookup(zone: "_defaultZone", recordNames: ["a"])[0].record?.fields["n"]?.value, 2)
    }

    func testReplaceNullsOmittedFieldsAndForceReplaceCreates() throws {
        let t = TempStore()
        let db = t.client()
        _ = try save(db, op(.create, "a", ["n": 1, "s": "x"]))
        let r = try save(db, op(.replace, "a", type: nil, tag: "1", ["n": 5]))
        XCTAssertNil(r.record?.fields["s"])
        XCTAssertEqual(r.record?.fields["n"]?.value, 5)
        let fr = try save(db, op(.forceReplace, "b", ["z": "q"]))
        XCTAssertEqual(fr.record?.fields["z"]?.value, "q")
        XCTAssertEqual(try save(db, op(.replace, "a", type: nil, ["n": 1])).error?.code, .badRequest, "replace needs a tag")
    }

    func testForceUpdateCreatesOrMergesWithoutTag() throws {
        let t = TempStore()
        let db = t.client()
        XCTAssertNotNil(try save(db, op(.forceUpdate, "a", ["n": 1])).record)
        let m = try save(db, op(.forceUpdate, "a", type: nil, ["s": "y"]))
        XCTAssertEqual(m.record?.fields.count, 2)
        XCTAssertEqual(try save(db, op(.forceUpdate, "new", type: nil)).error?.code, .badRequest, "a new record needs a type")
    }

    func testUpdateOfMissingRecordIsNotFound() throws {
        let db = TempStore().client()
        XCTAssertEqual(try save(db, op(.update, "ghost", tag: "1")).error?.code, .notFound)
        XCTAssertEqual(try save(db, op(.forceDelete, "ghost")).error?.code, .notFound)
    }

    func testDeleteWithTagAndTombstone() throws {
        let db = TempStore().client()
        _ = try save(db, op(.create, "a"))
        XCTAssertEqual(try save(db, op(.delete, "a", tag: "9")).error?.code, .conflict)
        guard case .deleted(let n, _, _) = try save(db, op(.delete, "a", tag: "1")) else { return XCTFail("not deleted") }
        XCTAssertEqual(n, "a")
        XCTAssertEqual(try db.lookup(zone: "_defaultZone", recordNames: ["a"])[0].error?.code, .notFound)
    }

    func testTypeMismatchOnUpdateIsRefused() throws {
        let db = TempStore().client()
        _ = try save(db, op(.create, "a", type: "Item"))
        XCTAssertEqual(try save(db, op(.forceUpdate, "a", type: "Other")).error?.code, .badRequest)
    }

    func testRecordLimits() throws {
        let db = TempStore().client()
        let big = String(repeating: "x", count: 1_000_001)
        XCTAssertEqual(try save(db, op(.create, "big", ["s": .string(big)])).error?.code, .limitExceeded)
        var many: [String: JSONValue] = [:]
        for i in 0..<257 { many["f\(i)"] = .int(Int64(i)) }
        XCTAssertEqual(try save(db, op(.create, "wide", many)).error?.code, .limitExceeded)
        let ops = (0..<401).map { op(.create, "r\($0)") }
        XCTAssertThrowsError(try db.modify(zone: "_defaultZone", operations: ops)) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .limitExceeded)
        }
    }

    func testSignedOutCannotWriteButReadsPublic() throws {
        let t = TempStore(signIn: false)
        XCTAssertThrowsError(try t.client().modify(zone: "_defaultZone", operations: [op(.create, "a")])) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .authenticationRequired)
        }
        XCTAssertThrowsError(try t.client().lookup(zone: "_defaultZone", recordNames: ["a"]))
        XCTAssertEqual(try t.client(caller(.public)).lookup(zone: "_defaultZone", recordNames: ["a"])[0].error?.code, .notFound)
    }

    func testPublicRecordsWritableOnlyByCreator() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = t.client(caller(.public))
        _ = try save(bob, op(.create, "p", ["n": 1]))
        let alice = t.client(caller(.public, .appleID("alice@example.com")))
        XCTAssertEqual(try save(alice, op(.forceUpdate, "p", type: nil, ["n": 2])).error?.code, .accessDenied)
        XCTAssertEqual(try save(alice, op(.forceDelete, "p")).error?.code, .accessDenied)
        XCTAssertNotNil(try save(bob, op(.forceUpdate, "p", type: nil, ["n": 3])).record)
    }

    func testPrivateDatabasesAreSeparatePerUser() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        _ = try save(t.client(), op(.create, "mine"))
        XCTAssertEqual(try t.client(caller(.private, .appleID("alice@example.com"))).lookup(zone: "_defaultZone", recordNames: ["mine"])[0].error?.code, .notFound)
    }

    func testFailedWriteToFreshStoreChangesNothing() throws {
        let t = TempStore()
        let before = t.snapshot()
        _ = try save(t.client(), op(.update, "ghost", tag: "1"))
        XCTAssertEqual(before, t.snapshot())
    }
}
