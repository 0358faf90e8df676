import CKJSON
import CKTestSupport
import XCTest
@testable import CKCore

final class ReferenceTests: XCTestCase {
    func ref(_ name: String, _ action: String) -> JSONValue { ["recordName": .string(name), "action": .string(action)] }

    func testValidateNeedsTargetAndBlocksItsDelete() throws {
        let db = TempStore().client()
        let missing = try db.modify(zone: "_defaultZone", operations: [op(.create, "child", ["p": ref("parent", "VALIDATE")])])
        XCTAssertEqual(missing[0].error?.code, .validatingReferenceError)
        _ = try db.modify(zone: "_defaultZone", operations: [op(.create, "parent"), op(.create, "child", ["p": ref("parent", "VALIDATE")])])
        XCTAssertEqual(try db.modify(zone: "_defaultZone", operations: [op(.forceDelete, "parent")])[0].error?.code, .validatingReferenceError)
        _ = try db.modify(zone: "_defaultZone", operations: [op(.forceDelete, "child")])
        XCTAssertNil(try db.modify(zone: "_defaultZone", operations: [op(.forceDelete, "parent")])[0].error)
    }

    func testDeleteSelfCascades() throws {
        let db = TempStore().client()
        _ = try db.modify(zone: "_defaultZone", operations: [
            op(.create, "list"), op(.create, "item1", ["l": ref("list", "DELETE_SELF")]),
            op(.create, "sub", ["i": ref("item1", "DELETE_SELF")]), op(.create, "keep", ["l": ref("list", "NONE")]),
        ])
        _ = try db.modify(zone: "_defaultZone", operations: [op(.forceDelete, "list")])
        let r = try db.lookup(zone: "_defaultZone", recordNames: ["item1", "sub", "keep"])
        XCTAssertEqual(r.map { $0.error?.code }, [.notFound, .notFound, nil])
    }

    func testChangingAReferenceMovesTheIndex() throws {
        let db = TempStore().client()
        _ = try db.modify(zone: "_defaultZone", operations: [op(.create, "a"), op(.create, "b"), op(.create, "c", ["r": ref("a", "VALIDATE")])])
        _ = try db.modify(zone: "_defaultZone", operations: [op(.forceUpdate, "c", type: nil, ["r": ref("b", "VALIDATE")])])
        XCTAssertNil(try db.modify(zone: "_defaultZone", operations: [op(.forceDelete, "a")])[0].error, "a is no longer referenced")
        XCTAssertEqual(try db.modify(zone: "_defaultZone", operations: [op(.forceDelete, "b")])[0].error?.code, .validatingReferenceError)
    }

    func testCrossZoneReferenceRefused() throws {
        let db = TempStore().client()
        let r: JSONValue = ["recordName": "x", "action": "NONE", "zoneID": ["zoneName": "Other"]]
        XCTAssertEqual(try db.modify(zone: "_defaultZone", operations: [op(.create, "a", ["r": r])])[0].error?.code, .badRequest)
    }
}
