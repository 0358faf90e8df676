import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

final class SchemaTests: XCTestCase {
    /// Apple's documented example schema (reference §8), kept in Tests/Fixtures.
    static let apple = try! String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/apple-example.ckdb"), encoding: .utf8)

    func testParsesEveryElementOfTheLanguage() throws {
        let s = try SchemaParser.parse("""
        // a comment
        -- another
        DEFINE SCHEMA /* block
        comment */
            CREATE ROLE Editor;
            record type Note (
                "grant" STRING QUERYABLE SEARCHABLE SORTABLE,
                secret ENCRYPTED STRING,
                n NUMBER PREFERRED AS DOUBLE,
                m NUMBER,
                tags LIST<STRING> QUERYABLE,
                spots LIST<LOCATION>,
                photo ASSET,
                GRANT READ TO "_world",
                GRANT WRITE, CREATE TO Editor
            );
        """)
        XCTAssertEqual(s.roles, ["Editor"])
        let t = try XCTUnwrap(s.types["Note"])
        XCTAssertEqual(t.fields["grant"]?.type, SchemaType(.string))
        XCTAssertEqual(t.fields["grant"].map { [$0.queryable, $0.searchable, $0.sortable] }, [true, true, true])
        XCTAssertEqual(t.fields["secret"]?.type, SchemaType(.string, encrypted: true))
        XCTAssertEqual(t.fields["n"]?.type, SchemaType(.number, preferred: .double))
        XCTAssertEqual(t.fields["tags"]?.type, SchemaType(.string, list: true))
        XCTAssertEqual(t.fields["photo"]?.type, SchemaType(.asset))
        XCTAssertEqual(t.grants["Editor"], [.write, .create])
        XCTAssertEqual(t.grants["_world"], [.read])
        XCTAssertNotNil(t.fields["___recordID"], "system fields always exist")
        XCTAssertNotNil(s.types["Users"], "Users is always there")
    }

    func testErrorsNameLineAndColumn() {
        let cases: [(String, String)] = [
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a BLOB\n  );", "3:7: unknown type 'BLOB'"),
            ("DEFINE SCHEMA\n  RECORD TYPE T\n    a STRING\n  );", "3:5: expected '(' after RECORD TYPE T"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a STRING\n", "4:1: expected ',' or ')'"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    queryable STRING\n  );", "3:5: 'queryable' is a reserved word"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a LIST<STRING\n  );", "4:3: expected '>'"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a STRING\n  )\n  RECORD TYPE U ();", "5:3: expected ';'"),
            ("SCHEMA", "1:1: expected DEFINE"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    ___etag STRING\n  );", "3:5: system field ___etag must be quoted"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a STRING,\n    a INT64\n  );", "4:5: field 'a' is defined twice"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    GRANT FLY TO \"_world\"\n  );", "3:11: expected READ, CREATE or WRITE"),
            ("DEFINE SCHEMA /* open", "1:15: comment is not closed"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a INT64 SEARCHABLE\n  );", "3:13: only STRING fields can be SEARCHABLE"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    GRANT READ TO Ghost\n  );", "role 'Ghost', which no CREATE ROLE defines"),
            ("DEFINE SCHEMA\n  RECORD TYPE T (\n    a STRING @\n  );", "3:14: unexpected character '@'"),
        ]
        for (text, want) in cases {
            XCTAssertThrowsError(try SchemaParser.parse(text), want) { e in
                let reason = (e as? CloudKitError)?.reason ?? ""
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
                XCTAssertTrue(reason.contains(want), "\(reason) lacks \(want)")
            }
        }
    }

    func testExportImportExportIsByteIdentical() throws {
        let once = SchemaPrinter.print(try SchemaParser.parse(Self.apple))
        let twice = SchemaPrinter.print(try SchemaParser.parse(once))
        XCTAssertEqual(once, twice)
        XCTAssertTrue(once.hasPrefix("DEFINE SCHEMA\n\n    CREATE ROLE DeptManager;\n\n    RECORD TYPE Department (\n        \"___createTime\" TIMESTAMP QUERYABLE SORTABLE,\n        \"___createdBy\"  REFERENCE,\n"), once)
        XCTAssertTrue(once.contains("        address         STRING,\n        employees       LIST<REFERENCE>,\n"), once)
        XCTAssertTrue(once.contains("        GRANT READ TO \"_world\",\n        GRANT WRITE, CREATE, READ TO DeptManager\n    );\n"), once)
        XCTAssertTrue(once.hasSuffix("        roles           LIST<INT64>,\n        GRANT WRITE TO \"_creator\",\n        GRANT READ TO \"_world\"\n    );\n"), "Users last")
    }

    func testDevelopmentDefinesJustInTimeAndRefusesAnotherType() throws {
        let t = TempStore()
        let db = t.client()
        _ = try db.modify(zone: "_defaultZone", operations: [op(.create, "a", type: "ToDoItem", ["title": "x", "n": 1, "tags": .array(["a"])])])
        let s = try SchemaStore(paths: t.store.paths, container: "iCloud.com.example.test", environment: .development).load()
        let todo = try XCTUnwrap(s.types["ToDoItem"])
        XCTAssertEqual(todo.fields["title"].map { [$0.queryable, $0.searchable, $0.sortable] }, [true, true, true])
        XCTAssertEqual(todo.fields["n"].map { [$0.queryable, $0.searchable, $0.sortable] }, [true, false, true])
        XCTAssertEqual(todo.fields["tags"]?.type, SchemaType(.string, list: true))
        XCTAssertEqual(todo.fields["___recordID"]?.queryable, false)
        let before = t.snapshot()
        let r = try t.client().modify(zone: "_defaultZone", operations: [op(.create, "b", type: "ToDoItem", ["n": "text"])])
        XCTAssertEqual(r[0].error?.code, .badRequest)
        XCTAssertTrue(r[0].error?.reason.contains("field 'n'") ?? false)
        XCTAssertTrue(r[0].error?.reason.contains("INT64") ?? false)
        XCTAssertTrue(r[0].error?.reason.contains("STRING") ?? false)
        XCTAssertEqual(t.snapshot(), before, "a refused save changes nothing, schema included")
    }

    func testProductionNeverInventsSchemaUntilDeployed() throws {
        let t = TempStore()
        let prod = t.client(caller(env: .production))
        let r = try prod.modify(zone: "_defaultZone", operations: [op(.create, "a", type: "ToDoItem", ["title": "x"])])
        XCTAssertEqual(r[0].error?.reason, "Cannot create new type ToDoItem in production schema")
        _ = try t.client().modify(zone: "_defaultZone", operations: [op(.create, "a", type: "ToDoItem", ["title": "x"])])
        XCTAssertEqual(try t.api.deploySchema(as: caller()).document["recordTypesAdded"], ["ToDoItem"])
        XCTAssertNil(try prod.modify(zone: "_defaultZone", operations: [op(.create, "a", type: "ToDoItem", ["title": "x"])])[0].error)
        let more = try prod.modify(zone: "_defaultZone", operations: [op(.create, "b", type: "ToDoItem", ["due": 1])])
        XCTAssertEqual(more[0].error?.reason, "Cannot create or modify field 'due' in record 'ToDoItem' in production schema")
    }

    func testDeployAndImportNeverRemoveOrRetypeProduction() throws {
        let t = TempStore()
        let admin = SchemaAdmin(paths: t.store.paths, container: "iCloud.com.example.test")
        try admin.importSchema("DEFINE SCHEMA RECORD TYPE A (x STRING, y INT64);", validateOnly: false)
        _ = try admin.deploy()
        XCTAssertThrowsError(try admin.importSchema("DEFINE SCHEMA RECORD TYPE A (x STRING);", validateOnly: false)) {
            XCTAssertTrue(($0 as? CloudKitError)?.reason.contains("field 'y'") ?? false)
        }
        XCTAssertThrowsError(try admin.importSchema("DEFINE SCHEMA RECORD TYPE A (x STRING, y DOUBLE);", validateOnly: true))
        XCTAssertThrowsError(try admin.importSchema("DEFINE SCHEMA RECORD TYPE B (x STRING);", validateOnly: true))
        // Development drifts (by hand) and deploy refuses, changing nothing.
        try admin.store(.development).save(try SchemaParser.parse("DEFINE SCHEMA RECORD TYPE A (x STRING);"))
        let prodBefore = try admin.store(.production).load()
        XCTAssertThrowsError(try admin.deploy())
        XCTAssertEqual(try admin.store(.production).load(), prodBefore)
        // Adding is fine, and so is dropping an index.
        try admin.importSchema("DEFINE SCHEMA RECORD TYPE A (x STRING, y INT64 QUERYABLE, z BYTES);", validateOnly: false)
        XCTAssertEqual(try admin.deploy().fieldsAdded, ["A.z"])
    }

    func testIndexesDecideWhatAQueryCanAsk() throws {
        let s = try SchemaParser.parse("""
        DEFINE SCHEMA RECORD TYPE T ("___recordID" REFERENCE QUERYABLE, q STRING QUERYABLE, s INT64 SORTABLE, t STRING SEARCHABLE, plain STRING,
                                     tags LIST<STRING> QUERYABLE SORTABLE, blob BYTES QUERYABLE, secret ENCRYPTED STRING QUERYABLE);
        """)
        func req(_ filters: [QueryFilter] = [], sorts: [QuerySort] = [], type: String = "T") -> QueryRequest {
            QueryRequest(recordType: type, filters: filters, sorts: sorts)
        }
        func f(_ n: String, _ c: QueryComparator, _ v: JSONValue) -> QueryFilter { QueryFilter(fieldName: n, comparator: c, value: field(v)!) }
        func refusal(_ r: QueryRequest, in schema: Schema? = nil) -> String? { QueryIndexes(r, in: schema ?? s).refusal?.reason }
        XCTAssertNil(refusal(req()))
        XCTAssertNil(refusal(req([f("q", .equals, "x")])))
        XCTAssertEqual(refusal(req([f("plain", .equals, "x")])), "Field 'plain' is not marked queryable")
        XCTAssertEqual(refusal(req([f("q", .greaterThan, "x")])), "Field 'q' is not marked sortable")
        XCTAssertNil(refusal(req([f("s", .lessThan, 3)])))
        XCTAssertEqual(refusal(req([f("q", .containsAnyTokens, "x")])), "Field 'q' is not marked searchable")
        XCTAssertNil(refusal(req([f("t", .containsAllTokens, "x")])))
        XCTAssertEqual(refusal(req(sorts: [QuerySort(fieldName: "q")])), "Field 'q' is not marked sortable")
        XCTAssertEqual(refusal(req(type: "Nope")), "Did not find record type: Nope")
        let noID = try SchemaParser.parse("DEFINE SCHEMA RECORD TYPE T (q STRING QUERYABLE);")
        XCTAssertEqual(refusal(req(), in: noID), "Field 'recordName' is not marked queryable")
        // No index helps a sort on a list, or a filter on bytes or an encrypted field, whatever the schema says.
        XCTAssertNil(refusal(req([f("tags", .listContains, "x")])))
        XCTAssertEqual(refusal(req(sorts: [QuerySort(fieldName: "tags")])), "Field 'tags' is not marked sortable: a LIST field cannot be sorted")
        XCTAssertEqual(refusal(req([f("blob", .equals, .string("aGk="))])), "Field 'blob' is not marked queryable: a BYTES field cannot be indexed")
        XCTAssertEqual(refusal(req([f("secret", .equals, "x")])), "Field 'secret' is not marked queryable: an ENCRYPTED field cannot be indexed")
        // What to do next: the index, with its line in the .ckdb; the type, defined.
        let missing = QueryIndexes(req(), in: noID).refusal
        XCTAssertEqual(missing?.code, .badRequest)
        XCTAssertEqual(missing?.nextStep, .addIndex(recordType: "T", field: "___recordID", index: "QUERYABLE", ckdbLine: "\"___recordID\" REFERENCE QUERYABLE"))
        XCTAssertEqual(QueryIndexes(req([f("q", .greaterThan, "x")]), in: s).refusal?.nextStep,
                       .addIndex(recordType: "T", field: "q", index: "SORTABLE", ckdbLine: "q STRING QUERYABLE SORTABLE"))
        XCTAssertEqual(QueryIndexes(req(type: "Nope"), in: s).refusal?.nextStep, .defineRecordType("Nope"))
        XCTAssertNil(QueryIndexes(req(sorts: [QuerySort(fieldName: "tags")]), in: s).refusal?.nextStep, "no index can help")
    }

    func testGrantsAndRolesGovernThePublicDatabase() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let admin = SchemaAdmin(paths: t.store.paths, container: "iCloud.com.example.test")
        try admin.importSchema("""
        DEFINE SCHEMA CREATE ROLE Editor;
        RECORD TYPE Memo (text STRING, GRANT READ TO "_icloud", GRANT CREATE TO Editor, GRANT WRITE TO Editor);
        """, validateOnly: false)
        let alice = t.client(caller(.public, .appleID("alice@example.com"))), bob = t.client(caller(.public, .appleID("bob@example.com")))
        XCTAssertEqual(try alice.modify(zone: "_defaultZone", operations: [op(.create, "m", type: "Memo", ["text": "x"])])[0].error?.code, .accessDenied)
        _ = try t.api.setRole(RoleRequest(role: "Editor", appleID: "alice@example.com", member: true), as: caller())
        XCTAssertNil(try alice.modify(zone: "_defaultZone", operations: [op(.create, "m", type: "Memo", ["text": "x"])])[0].error)
        XCTAssertEqual(try bob.modify(zone: "_defaultZone", operations: [op(.forceUpdate, "m", type: "Memo", ["text": "y"])])[0].error?.code, .accessDenied)
        XCTAssertNotNil(try bob.lookup(zone: "_defaultZone", recordNames: ["m"])[0].record, "_icloud READ: any signed-in user reads")
        try t.store.accounts.signOut()
        let anonymous = t.client(caller(.public))
        XCTAssertEqual(try anonymous.lookup(zone: "_defaultZone", recordNames: ["m"])[0].error?.code, .notFound,
                       "no _world READ: a record the caller may not read does not exist for them")
        XCTAssertThrowsError(try t.api.setRole(RoleRequest(role: "Ghost", appleID: "alice@example.com", member: true), as: caller())) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest, "a role the schema does not define")
        }
    }
}
