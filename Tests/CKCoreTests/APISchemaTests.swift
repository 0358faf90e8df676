import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The schema entries of the API, in-process: export, import (and validation only), deploy,
/// reset and custom roles, each refusal changing nothing.
final class APISchemaTests: XCTestCase {
    static let container = "iCloud.com.example.test"

    func code(_ e: Error) -> ServerErrorCode? { (e as? CloudKitError)?.code }

    func reason(_ e: Error) -> String { (e as? CloudKitError)?.reason ?? "\(e)" }

    let todo = """
        DEFINE SCHEMA
            CREATE ROLE Editor;
            RECORD TYPE ToDoItem (
                "___recordID" REFERENCE QUERYABLE,
                title STRING QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world",
                GRANT WRITE TO Editor
            );
        """

    func testExportIsTheSchemaLanguageOfTheCallersEnvironment() throws {
        let t = TempStore()
        let a = api(t.root)
        let initial = try a.exportSchema(as: caller())
        XCTAssertTrue(initial.text.hasPrefix("DEFINE SCHEMA\n"), initial.text)
        XCTAssertTrue(initial.text.contains("RECORD TYPE Users ("))
        XCTAssertTrue(initial.text.hasSuffix("\n"))
        XCTAssertEqual(initial.jsonValue, .object(["schema": .string(initial.text)]))
        _ = try a.importSchema(SchemaImportRequest(text: todo), as: caller())
        let dev = try a.exportSchema(as: caller()).text
        XCTAssertTrue(dev.contains("RECORD TYPE ToDoItem (") && dev.contains("CREATE ROLE Editor;"), dev)
        XCTAssertFalse(try a.exportSchema(as: caller(env: .production)).text.contains("ToDoItem"), "production has only what is deployed")
        // What export prints imports back as the same schema.
        _ = try a.importSchema(SchemaImportRequest(text: dev), as: caller())
        XCTAssertEqual(try a.exportSchema(as: caller()).text, dev)
    }

    func testImportAppliesOrOnlyValidates() throws {
        let t = TempStore()
        let a = api(t.root)
        let before = t.snapshot()
        let checked = try a.importSchema(SchemaImportRequest(text: todo, validateOnly: true), as: caller())
        XCTAssertEqual(checked.jsonValue, ["valid": true, "applied": false, "recordTypes": ["ToDoItem", "Users"], "roles": ["Editor"]])
        XCTAssertEqual(t.snapshot(), before, "--validate writes nothing")
        let applied = try a.importSchema(SchemaImportRequest(text: todo), as: caller())
        XCTAssertEqual(applied.jsonValue["applied"], true)
        XCTAssertNotNil(try SchemaAdmin(paths: t.store.paths, container: testContainer).store(.development).load().types["ToDoItem"])
    }

    func testImportRefusalsChangeNothing() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.importSchema(SchemaImportRequest(text: todo), as: caller())
        _ = try a.deploySchema(as: caller())
        let before = t.snapshot()
        // Into production: refused as cktool is; deploying is how schema gets there.
        XCTAssertThrowsError(try a.importSchema(SchemaImportRequest(text: todo), as: caller(env: .production))) { e in
            XCTAssertEqual(self.code(e), .badRequest)
            XCTAssertEqual(self.reason(e), "schemas are imported into development, not production; production gets the development schema when it is deployed")
            XCTAssertEqual((e as? CloudKitError)?.nextStep, .deploySchema)
        }
        XCTAssertThrowsError(try a.importSchema(SchemaImportRequest(text: "DEFINE SCHEMA\n  RECORD TYPE A (x BADTYPE);"), as: caller())) { e in
            XCTAssertEqual(self.code(e), .badRequest)
            XCTAssertTrue(self.reason(e).contains("2:"), "line:column: \(self.reason(e))")
        }
        XCTAssertThrowsError(try a.importSchema(SchemaImportRequest(text: "DEFINE SCHEMA RECORD TYPE Other (x STRING);"), as: caller())) { e in
            XCTAssertEqual(self.code(e), .badRequest)
            XCTAssertEqual(self.reason(e), "cannot import: record type 'ToDoItem' exists in production and cannot be removed")
        }
        XCTAssertThrowsError(try a.importSchema(SchemaImportRequest(text: todo), as: caller(container: "com.example.app"))) { XCTAssertEqual(self.code($0), .badRequest) }
        XCTAssertEqual(t.snapshot(), before)
    }

    func testDeployIsAdditive() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t1", type: "ToDoItem", ["title": "Milk"])]), as: caller())
        let first = try a.deploySchema(as: caller(env: .production))
        XCTAssertEqual(first.jsonValue, ["deployed": true, "recordTypesAdded": ["ToDoItem"], "fieldsAdded": []], "deploy goes development → production, whatever the caller's environment")
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t2", type: "ToDoItem", ["due": 3])]), as: caller())
        XCTAssertEqual(try a.deploySchema(as: caller()).jsonValue["fieldsAdded"], ["ToDoItem.due"])
        XCTAssertEqual(try a.deploySchema(as: caller()).jsonValue["fieldsAdded"], [], "again: nothing to add")
        // Development that lost a field production has is not deployed.
        _ = try a.resetSchema(as: caller())
        try SchemaAdmin(paths: t.store.paths, container: testContainer).store(.development).save(try SchemaParser.parse("DEFINE SCHEMA RECORD TYPE ToDoItem (title STRING);"))
        let before = t.snapshot()
        XCTAssertThrowsError(try a.deploySchema(as: caller())) { e in
            XCTAssertEqual(self.code(e), .badRequest)
            XCTAssertTrue(self.reason(e).hasPrefix("cannot deploy: field 'due' of record type 'ToDoItem' exists in production"), self.reason(e))
        }
        XCTAssertEqual(t.snapshot(), before)
    }

    func testAConfirmedDeployIsOfTheDevelopmentSchemaItsPreviewShowed() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t1", type: "ToDoItem", ["title": "Milk"])]), as: caller())
        let preview = try a.deploySchema(as: caller(), dryRun: true)
        XCTAssertEqual(preview.development.count, 64)
        XCTAssertEqual(try a.deploySchema(as: caller(), dryRun: true).development, preview.development, "the same schema, the same fingerprint")
        // Development gains a field after the preview: the confirmation would deploy more than it showed.
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t2", type: "ToDoItem", ["due": 3])]), as: caller())
        let before = t.snapshot()
        XCTAssertThrowsError(try a.deploySchema(as: caller(), ifDevelopment: preview.development)) { e in
            XCTAssertEqual(self.code(e), .conflict)
            XCTAssertTrue(self.reason(e).contains("preview again"), self.reason(e))
        }
        XCTAssertEqual(t.snapshot(), before)
        let again = try a.deploySchema(as: caller(), dryRun: true)
        XCTAssertNotEqual(again.development, preview.development)
        XCTAssertEqual(try a.deploySchema(as: caller(), ifDevelopment: again.development).jsonValue["recordTypesAdded"], ["ToDoItem"])
    }

    func testResetEmptiesDevelopmentOnly() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t1", type: "ToDoItem", ["title": "Milk"])]), as: caller())
        _ = try a.deploySchema(as: caller())
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "p1", type: "ToDoItem", ["title": "Prod"])]), as: caller(env: .production))
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t2", type: "Scratch", ["n": 1])]), as: caller())
        XCTAssertEqual(try a.resetSchema(as: caller(env: .production)).jsonValue, ["reset": true, "environment": "development"])
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["t1"]), as: caller()).results[0].error?.code, .notFound)
        XCTAssertFalse(try a.exportSchema(as: caller()).text.contains("Scratch"), "development's schema is production's again")
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["p1"]), as: caller(env: .production)).results[0].record?.recordName, "p1")
    }

    /// A query the schema has no index for is refused in development as in production, with
    /// CloudKit's words and the index to add; `addSchemaIndexes` adds it (development only);
    /// `explainQuery` says what a query needs without running it.
    func testQueriesNeedTheirIndexesInDevelopmentTooAndGetThem() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "t1", type: "ToDoItem", ["title": "Milk", "n": 3])]), as: caller())
        _ = try a.deploySchema(as: caller())
        let unfiltered = QueryRecordsRequest(QueryRequest(recordType: "ToDoItem"))
        for env in [CKModel.Environment.development, .production] {
            XCTAssertThrowsError(try a.queryRecords(unfiltered, as: caller(env: env))) { e in
                XCTAssertEqual(code(e), .badRequest)
                XCTAssertEqual(reason(e), "Field 'recordName' is not marked queryable")
                XCTAssertEqual((e as? CloudKitError)?.nextStep, .addIndex(recordType: "ToDoItem", field: "___recordID", index: "QUERYABLE", ckdbLine: "\"___recordID\" REFERENCE QUERYABLE"))
            }
            XCTAssertThrowsError(try a.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Nope")), as: caller(env: env))) { e in
                XCTAssertEqual(reason(e), "Did not find record type: Nope")
                XCTAssertEqual((e as? CloudKitError)?.nextStep, env == .development ? .defineRecordType("Nope") : .deploySchema)
            }
        }
        let explained = try a.explainQuery(QueryRecordsRequest(QueryRequest(recordType: "ToDoItem", sorts: [QuerySort(fieldName: "n")])), as: caller())
        XCTAssertEqual(explained.document["answerable"], false)
        XCTAssertEqual(explained.document["refusal"], "Field 'recordName' is not marked queryable")
        XCTAssertEqual(explained.document["indexes"]?.arrayValue?.map { $0["ckdb"] ?? .null }, [.string("\"___recordID\" REFERENCE QUERYABLE"), "n INT64 QUERYABLE SORTABLE"])

        // Added in development: development answers; production, once deployed.
        let before = t.snapshot()
        XCTAssertThrowsError(try a.addSchemaIndexes(SchemaIndexRequest(recordType: "ToDoItem", fieldName: "recordName", indexes: [.queryable]), as: caller(env: .production))) {
            XCTAssertEqual(code($0), .badRequest)
        }
        XCTAssertEqual(t.snapshot(), before, "a refused index changes nothing")
        let added = try a.addSchemaIndexes(SchemaIndexRequest(recordType: "ToDoItem", fieldName: "recordName", indexes: [.queryable]), as: caller())
        XCTAssertEqual(added.document["added"], ["QUERYABLE"])
        XCTAssertEqual(try a.queryRecords(unfiltered, as: caller()).records.map(\.recordName), ["t1"])
        XCTAssertEqual(try a.explainQuery(unfiltered, as: caller()).document["answerable"], true)
        XCTAssertThrowsError(try a.queryRecords(unfiltered, as: caller(env: .production)))
        _ = try a.deploySchema(as: caller())
        XCTAssertEqual(try a.queryRecords(unfiltered, as: caller(env: .production)).records.count, 0, "production's own records: none")
    }

    func testRolesAreGivenTakenAndListed() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = try XCTUnwrap(t.store.accounts.user(appleID: "bob@example.com")).userRecordName
        let a = api(t.root)
        _ = try a.importSchema(SchemaImportRequest(text: todo), as: caller())
        XCTAssertEqual(try a.roles(as: caller()).jsonValue, ["roles": [["role": "Editor", "members": []]]])
        XCTAssertEqual(try a.setRole(RoleRequest(role: "Editor", appleID: "bob@example.com", member: true), as: caller()).jsonValue,
                       ["role": "Editor", "userRecordName": .string(bob), "member": true])
        let listed = try a.roles(as: caller())
        XCTAssertEqual(listed.listKey, "roles")
        XCTAssertEqual(listed.jsonValue, ["roles": [["role": "Editor", "members": [.string(bob)]]]])
        XCTAssertEqual(try a.roles(as: caller(env: .production)).jsonValue, ["roles": []], "production has no roles until deployed")

        let before = t.snapshot()
        XCTAssertThrowsError(try a.setRole(RoleRequest(role: "Editor", appleID: "nobody@example.com", member: true), as: caller())) { e in
            XCTAssertEqual(self.code(e), .notFound)
            XCTAssertEqual(self.reason(e), "no user with Apple ID 'nobody@example.com' has signed in on this device")
        }
        XCTAssertThrowsError(try a.setRole(RoleRequest(role: "Ghost", appleID: "bob@example.com", member: true), as: caller())) { e in
            XCTAssertEqual(self.code(e), .badRequest)
            XCTAssertTrue(self.reason(e).hasPrefix("role 'Ghost' is not defined in the development schema"), self.reason(e))
        }
        XCTAssertThrowsError(try a.setRole(RoleRequest(role: "Editor", appleID: "bob@example.com", member: true), as: caller(env: .production))) {
            XCTAssertEqual(self.code($0), .badRequest, "roles of production come with a deploy")
        }
        XCTAssertEqual(t.snapshot(), before)
        _ = try a.setRole(RoleRequest(role: "Editor", appleID: "bob@example.com", member: false), as: caller())
        XCTAssertEqual(try a.roles(as: caller()).jsonValue, ["roles": [["role": "Editor", "members": []]]])
    }
}
