import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// CloudKit's hard limit of 750 DELETE_SELF references to one target (reference §6,
/// N-CKRecord.Reference), exactly at its edge (issue 30, item 11): the 750th is accepted, the
/// 751st is LIMIT_EXCEEDED and changes nothing; a referrer already counted may save again.
final class DeleteSelfLimitTests: XCTestCase {
    private func child(_ name: String, _ action: String = "DELETE_SELF") -> RecordOperation {
        op(.create, name, type: "Child", ["owner": ["recordName": "target", "action": .string(action)]])
    }

    func testTheSevenHundredFiftiethDeleteSelfReferenceIsAcceptedAndTheNextRefused() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        XCTAssertNil(try db.modify(zone: "Z", operations: [op(.create, "target", type: "Owner")])[0].error)
        var made = 0
        while made < 750 {
            let batch = (made..<min(made + Limits.operationsPerBatch, 750)).map { child("c\($0)") }
            let r = try db.modify(zone: "Z", operations: batch)
            XCTAssertEqual(r.compactMap(\.error).map(\.reason), [])
            made += batch.count
        }
        let before = t.snapshot()
        let refused = try db.modify(zone: "Z", operations: [child("c750")])
        XCTAssertEqual(refused[0].error?.code, .limitExceeded, "\(String(describing: refused[0].error))")
        XCTAssertEqual(t.snapshot(), before, "a refused save changes nothing")
        // Other kinds of reference do not count; a counted referrer saving again is no new one.
        XCTAssertNil(try db.modify(zone: "Z", operations: [child("v", "VALIDATE"), child("n", "NONE")]).first { $0.error != nil })
        var again = child("c0")
        again.type = .forceUpdate
        XCTAssertNil(try db.modify(zone: "Z", operations: [again])[0].error)
        // One fewer, and there is room for one more.
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "c1")])
        XCTAssertNil(try db.modify(zone: "Z", operations: [child("c750")])[0].error)
        XCTAssertEqual(try db.modify(zone: "Z", operations: [child("c751")])[0].error?.code, .limitExceeded)
        // Deleting the target (once VALIDATE no longer holds it) takes all 750 with it.
        XCTAssertNil(try db.modify(zone: "Z", operations: [op(.forceDelete, "v")])[0].error)
        XCTAssertNil(try db.modify(zone: "Z", operations: [op(.forceDelete, "target")])[0].error)
        XCTAssertEqual(try db.lookup(zone: "Z", recordNames: ["c750", "c0", "n"]).map { $0.error?.code }, [.notFound, .notFound, nil],
                       "a NONE reference is no ownership")
    }
}
