import CKJSON
import CKTestSupport
import XCTest
@testable import CKCore

/// Production never invents schema (issue 30, item 11): a record of a type production does not
/// know is refused by its error code, BAD_REQUEST — also when the record has no fields, so
/// that nothing about its fields can be what refuses it — and nothing is written.
final class ProductionNewTypeTests: XCTestCase {
    func testANewTypeIsRefusedInProductionByCodeEvenWithoutFields() throws {
        let t = TempStore()
        let prod = t.client(caller(env: .production))
        for fields: [String: JSONValue] in [[:], ["title": "x"]] {
            let before = t.snapshot()
            let r = try prod.modify(zone: "_defaultZone", operations: [op(.create, "a", type: "ToDoItem", fields)])
            XCTAssertEqual(r[0].error?.code, .badRequest, "fields \(fields.keys.sorted())")
            XCTAssertNil(r[0].record)
            XCTAssertEqual(t.snapshot(), before, "a refused save writes nothing, schema included")
        }
        // The error is the item's, not the request's.
        let answer = try t.api.modifyRecords(ModifyRequest(operations: [op(.create, "b", type: "Empty")]), as: caller(env: .production, device: "d"))
        XCTAssertEqual(answer.results.map { $0.error?.code }, [.badRequest])
        // Development defines the type, even with no fields; once deployed, production takes it.
        XCTAssertNil(try t.client().modify(zone: "_defaultZone", operations: [op(.create, "a", type: "Empty")])[0].error)
        XCTAssertEqual(try t.api.deploySchema(as: caller()).document["recordTypesAdded"], ["Empty"])
        XCTAssertNil(try prod.modify(zone: "_defaultZone", operations: [op(.create, "b", type: "Empty")])[0].error)
    }
}
