import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The schema as CloudKit keeps it (issue 30, item 9): an import cannot retype a field that
/// holds data (every later save of those records would fail); fsck notices records that
/// disagree with their schema; a save reports the fields it defined just in time, for the CLI
/// to announce; the schema exports as JSON too.
final class SchemaFidelityTests: XCTestCase {
    private let todoAsString = """
        DEFINE SCHEMA
            RECORD TYPE Todo (title STRING, n STRING, spare STRING, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world");
        """

    func testImportRefusesRetypingAFieldThatHoldsDataAndChangesNothing() throws {
        let t = TempStore()
        let api = api(t.root)
        _ = try api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Z")]), as: caller())
        let saved = try api.modifyRecords(ModifyRequest(operations: [op(.create, "t1", type: "Todo", ["title": "milk", "n": 3])], zoneName: "Z"), as: caller())
        XCTAssertNil(saved.results[0].error)
        let before = t.snapshot()
        XCTAssertThrowsError(try api.importSchema(SchemaImportRequest(text: todoAsString), as: caller())) { e in
            let err = e as? CloudKitError
            XCTAssertEqual(err?.code, .badRequest)
            XCTAssertTrue(err?.reason.contains("field 'n' of record type 'Todo'") ?? false, err?.reason ?? "")
            XCTAssertTrue(err?.reason.contains("INT64") ?? false, err?.reason ?? "")
        }
        XCTAssertEqual(t.snapshot(), before, "a refused import changes nothing")
        XCTAssertThrowsError(try api.importSchema(SchemaImportRequest(text: todoAsString, validateOnly: true), as: caller()), "--validate says the same")
        XCTAssertNil(try api.modifyRecords(ModifyRequest(operations: [op(.forceUpdate, "t1", type: "Todo", ["n": 4])], zoneName: "Z"), as: caller()).results[0].error,
                     "saves go on working")
        // A field whose records are all gone may take another type; one no record holds too.
        _ = try api.modifyRecords(ModifyRequest(operations: [op(.forceDelete, "t1")], zoneName: "Z"), as: caller())
        XCTAssertNoThrow(try api.importSchema(SchemaImportRequest(text: todoAsString), as: caller()))
        XCTAssertNil(try api.modifyRecords(ModifyRequest(operations: [op(.create, "t2", type: "Todo", ["n": "three"])], zoneName: "Z"), as: caller()).results[0].error)
    }

    func testImportRefusesRetypingDataInAnyDatabaseOfDevelopment() throws {
        let t = TempStore()
        let api = api(t.root)
        let pub = caller(.public)
        XCTAssertNil(try api.modifyRecords(ModifyRequest(operations: [op(.create, "p1", type: "Todo", ["n": 1])]), as: pub).results[0].error)
        XCTAssertThrowsError(try api.importSchema(SchemaImportRequest(text: todoAsString), as: caller()))
    }

    func testFsckReportsRecordsThatDisagreeWithTheirSchema() throws {
        let t = TempStore()
        let db = t.client()
        try db.createZone("Z")
        XCTAssertNil(try db.modify(zone: "Z", operations: [op(.create, "t1", type: "Todo", ["n": 3, "title": "x"])])[0].error)
        XCTAssertTrue(try Fsck.run(paths: t.store.paths, repair: true).problems.isEmpty)
        // The schema file edited by hand (an import of an earlier ck did the same).
        let admin = SchemaAdmin(paths: t.store.paths, container: "iCloud.com.example.test")
        var s = try admin.store(.development).load()
        s.types["Todo"]!.fields["n"]!.type = try XCTUnwrap(SchemaType(fieldType: FieldType(tag: "STRING")!))
        try admin.store(.development).save(s)
        let r = try Fsck.run(paths: t.store.paths, repair: true)
        XCTAssertFalse(r.clean)
        XCTAssertEqual(r.problems.count, 1, "\(r.problems)")
        XCTAssertTrue(r.problems.first?.problem.contains("field 'n'") ?? false, "\(r.problems)")
        XCTAssertTrue(r.problems.first?.problem.contains("INT64") ?? false)
        XCTAssertFalse(r.problems.first?.repaired ?? true, "fsck cannot know which is right")
    }

    func testASaveReportsTheFieldsItDefinedJustInTime() throws {
        let t = TempStore()
        let api = api(t.root)
        let first = try api.modifyRecords(ModifyRequest(operations: [op(.create, "t1", type: "Todo", ["done": "yes", "n": 1])]), as: caller())
        XCTAssertEqual(first.definedFields.map { "\($0.recordType).\($0.fieldName) \($0.type)" }, ["Todo.done STRING", "Todo.n INT64"])
        XCTAssertTrue(first.definedFields.allSatisfy(\.newRecordType))
        var withDate = op(.create, "t2", type: "Todo", ["done": "no"])
        withDate.fields["when"] = try RecordField.parse(name: "when", json: ["type": "TIMESTAMP", "value": 0])
        let second = try api.modifyRecords(ModifyRequest(operations: [withDate]), as: caller())
        XCTAssertEqual(second.definedFields.map { "\($0.recordType).\($0.fieldName) \($0.type)" }, ["Todo.when TIMESTAMP"])
        XCTAssertFalse(second.definedFields.contains { $0.newRecordType })
        let again = try api.modifyRecords(ModifyRequest(operations: [op(.create, "t3", type: "Todo", ["done": "no"])]), as: caller())
        XCTAssertEqual(again.definedFields.count, 0)
        XCTAssertNil(JSONWriter.compact(again.jsonValue).range(of: "definedFields"), "the records/modify body stays Apple's")
        // A refused save defines nothing.
        let refused = try api.modifyRecords(ModifyRequest(operations: [op(.create, "t3", type: "Todo", ["other": 1])]), as: caller())
        XCTAssertNotNil(refused.results[0].error)
        XCTAssertEqual(refused.definedFields.count, 0)
    }

    func testTheSchemaExportsAsJSON() throws {
        let t = TempStore()
        let api = api(t.root)
        _ = try api.importSchema(SchemaImportRequest(text: """
            DEFINE SCHEMA
                CREATE ROLE Editor;
                RECORD TYPE Todo (title STRING QUERYABLE SORTABLE, tags LIST<STRING>, GRANT READ TO "_world", GRANT WRITE, READ TO Editor);
            """), as: caller())
        let body = try api.exportSchemaJSON(as: caller())
        let j = JSONValue.object(body.document)
        XCTAssertEqual(j["roles"], ["Editor"])
        let types = try XCTUnwrap(j["recordTypes"]?.arrayValue)
        XCTAssertEqual(types.compactMap { $0["name"]?.stringValue }, ["Todo", "Users"])
        let todo = types[0]
        let fields = try XCTUnwrap(todo["fields"]?.arrayValue)
        let title = try XCTUnwrap(fields.first { $0["name"]?.stringValue == "title" })
        XCTAssertEqual(title["type"], "STRING")
        XCTAssertEqual(title["queryable"], true)
        XCTAssertEqual(title["sortable"], true)
        XCTAssertEqual(title["searchable"], false)
        XCTAssertEqual(fields.first { $0["name"]?.stringValue == "tags" }?["type"], "LIST<STRING>")
        XCTAssertEqual(fields.first?["name"], "___createTime", "system fields first, as the text export")
        XCTAssertEqual(todo["grants"]?["Editor"], ["READ", "WRITE"])
        XCTAssertEqual(todo["grants"]?["_world"], ["READ"])
    }
}
