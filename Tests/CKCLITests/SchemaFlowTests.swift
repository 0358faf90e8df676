import CKTestSupport
import XCTest

/// The development → production workflow through the command line.
final class SchemaFlowTests: XCTestCase {
    func testToDoItemWorksInDevelopmentAndNeedsADeployInProduction() {
        let s = CLISandbox()
        s.signIn()
        let save = ["record", "save", "--type", "ToDoItem", "--name", "todo-1", "title=Get apples", "priority=3"]
        XCTAssertEqual(s.run(save).status, 0)
        s.assertUnchanged("production save") {
            assertFailure(s.run(["--env", "production"] + save), exit: 6, contains: "Cannot create new type ToDoItem in production schema")
        }
        s.assertUnchanged("a deploy's preview") {
            let preview = s.ck("schema", "deploy", "--dry-run")
            XCTAssertEqual(preview.status, 0, preview.stderr)
            XCTAssertEqual(preview.object["deployed"] as? Bool, false)
            XCTAssertEqual(preview.object["recordTypesAdded"] as? [String], ["ToDoItem"])
        }
        let deploy = s.ck("schema", "deploy")
        XCTAssertEqual(deploy.status, 0, deploy.stderr)
        XCTAssertEqual(deploy.object["deployed"] as? Bool, true)
        XCTAssertEqual(deploy.object["recordTypesAdded"] as? [String], ["ToDoItem"])
        XCTAssertEqual(s.run(["--env", "production"] + save).status, 0)
        s.assertUnchanged("new field in production") {
            assertFailure(s.ck("--env", "production", "record", "save", "--type", "ToDoItem", "--name", "todo-2", "due:TIMESTAMP=2020-01-01"),
                          exit: 6, contains: "Cannot create or modify field 'due' in record 'ToDoItem' in production schema")
        }
        s.assertUnchanged("type change") {
            // An untyped value is read as the schema's type; one that cannot be that type is refused.
            assertFailure(s.ck("record", "save", "--type", "ToDoItem", "--name", "todo-3", "priority=high"), exit: 6,
                          contains: "field 'priority' is INT64 in the schema of record type 'ToDoItem' but 'high' is not a 64-bit integer")
            assertFailure(s.ck("record", "save", "--type", "ToDoItem", "--name", "todo-3", "priority:STRING=high"), exit: 6,
                          contains: "field 'priority' in record type 'ToDoItem': the schema has INT64, the value is STRING")
        }
    }

    func testAppleExampleRoundTripsAndBadSchemasChangeNothing() throws {
        let s = CLISandbox()
        let file = s.root.appendingPathComponent("apple.ckdb")
        try SchemaTestsText.apple.write(to: file, atomically: true, encoding: .utf8)
        let imported = s.ck("schema", "import", file.path)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let first = s.ck("schema", "export")
        XCTAssertTrue(first.stdout.contains("GRANT WRITE, CREATE, READ TO DeptManager"), first.stdout)
        let exported = s.root.appendingPathComponent("exported.ckdb")
        try first.stdout.write(to: exported, atomically: true, encoding: .utf8)
        XCTAssertEqual(s.ck("schema", "import", exported.path).status, 0)
        XCTAssertEqual(s.ck("schema", "export").stdout, first.stdout, "export → import → export is byte-identical")
        let bad: [(String, String)] = [
            ("DEFINE SCHEMA RECORD TYPE T (a BLOB);", "1:32: unknown type 'BLOB'"),
            ("DEFINE SCHEMA RECORD TYPE T a STRING);", "1:29: expected '('"),
            ("DEFINE SCHEMA RECORD TYPE T (sortable STRING);", "1:30: 'sortable' is a reserved word"),
            ("DEFINE SCHEMA\nRECORD TYPE T (\n  a STRING,\n  b LIST<INT64\n);", "5:1: expected '>'"),
        ]
        for (text, want) in bad {
            let f = s.root.appendingPathComponent("bad.ckdb")
            try text.write(to: f, atomically: true, encoding: .utf8)
            s.assertUnchanged(want) {
                assertFailure(s.ck("schema", "import", f.path), exit: 6, contains: want)
                assertFailure(s.ck("schema", "import", f.path, "--validate"), exit: 6, contains: want)
            }
        }
        // Production keeps what it has: once deployed, a schema without Department is refused.
        XCTAssertEqual(s.ck("schema", "deploy").status, 0)
        let smaller = s.root.appendingPathComponent("smaller.ckdb")
        try "DEFINE SCHEMA RECORD TYPE Other (x STRING);".write(to: smaller, atomically: true, encoding: .utf8)
        s.assertUnchanged("removal") {
            assertFailure(s.ck("schema", "import", smaller.path), exit: 6, contains: "record type 'Department' exists in production and cannot be removed")
        }
        assertFailure(s.ck("schema", "import", "/nonexistent.ckdb"), exit: 6, contains: "no such file")
    }

    /// Development refuses the queries production refuses, in CloudKit's words, with the
    /// index to add; `--explain` shows what a query needs; the index added, both answer.
    func testIndexErrorsInDevelopmentAsInProduction() throws {
        let s = CLISandbox()
        s.signIn()
        s.ck("record", "save", "--type", "Memo", "--name", "m1", "text=hello", "blob:BYTES=aGk=", "tags:STRING_LIST=a,b")
        XCTAssertEqual(s.ck("schema", "deploy").status, 0)
        for env in [["--env", "development"], ["--env", "production"]] {
            s.assertUnchanged("\(env) refusals") {
                let unfiltered = s.run(env + ["record", "query", "--type", "Memo"])
                assertFailure(unfiltered, exit: 6, contains: "BAD_REQUEST: Field 'recordName' is not marked queryable")
                XCTAssertTrue(unfiltered.stderr.contains("schema index add Memo ___recordID QUERYABLE"), unfiltered.stderr)
                XCTAssertTrue(unfiltered.stderr.contains(#""___recordID" REFERENCE QUERYABLE"#), unfiltered.stderr)
                assertFailure(s.run(env + ["record", "query", "--type", "Nope", "--filter", "text = x"]), exit: 6, contains: "Did not find record type: Nope")
                assertFailure(s.run(env + ["record", "query", "--type", "Memo", "--filter", "blob = aGk="]), exit: 6,
                              contains: "Field 'blob' is not marked queryable: a BYTES field cannot be indexed")
                assertFailure(s.run(env + ["record", "query", "--type", "Memo", "--filter", "text = hello", "--sort", "tags"]), exit: 6,
                              contains: "Field 'tags' is not marked sortable: a LIST field cannot be sorted")
            }
            let filtered = s.run(env + ["record", "query", "--type", "Memo", "--filter", "text = hello"])
            XCTAssertEqual(filtered.status, 0, "just-in-time strings are queryable: \(filtered.stderr)")
            XCTAssertEqual((filtered.object["records"] as? [Any])?.count, env[1] == "development" ? 1 : 0, "production has its own records")
            XCTAssertEqual(filtered.stderr, "")
        }
        // A list reads the zone without any index: ck's own way to look at its files.
        XCTAssertEqual((s.ck("record", "list", "--type", "Memo").object["records"] as? [Any])?.count, 1)
        // --explain runs nothing and says what the query needs.
        let explained = s.ck("record", "query", "--type", "Memo", "--sort", "text", "--explain")
        XCTAssertEqual(explained.status, 0, explained.stderr)
        XCTAssertEqual(explained.object["answerable"] as? Bool, false)
        XCTAssertEqual(explained.object["refusal"] as? String, "Field 'recordName' is not marked queryable")
        let needs = explained.object["indexes"] as? [[String: Any]] ?? []
        XCTAssertEqual(needs.map { $0["ckdb"] as? String }, [#""___recordID" REFERENCE QUERYABLE"#, "text STRING QUERYABLE SEARCHABLE SORTABLE"])
        XCTAssertEqual(needs.map { $0["present"] as? Bool }, [false, true])
        assertFailure(s.ck("record", "query", "--type", "Memo", "--explain", "--all"), exit: 2, contains: "--explain runs no query")
        // Add the index by importing the exported schema with ___recordID QUERYABLE, then deploy.
        let schema = s.ck("schema", "export").stdout.replacingOccurrences(of: "\"___recordID\"   REFERENCE,", with: "\"___recordID\"   REFERENCE QUERYABLE,")
        let f = s.root.appendingPathComponent("s.ckdb")
        try schema.write(to: f, atomically: true, encoding: .utf8)
        XCTAssertEqual(s.ck("schema", "import", f.path).status, 0)
        let indexed = s.ck("record", "query", "--type", "Memo")
        XCTAssertEqual(indexed.status, 0, indexed.stderr)
        XCTAssertEqual((indexed.object["records"] as? [Any])?.count, 1)
        assertFailure(s.ck("--env", "production", "record", "query", "--type", "Memo"), exit: 6, contains: "not marked queryable")
        XCTAssertEqual(s.ck("schema", "deploy").status, 0)
        XCTAssertEqual(s.ck("--env", "production", "record", "query", "--type", "Memo").status, 0)
    }

    /// `ck schema index add`: the index a refusal names, added without editing the schema file;
    /// refused for what no index can serve, in production, and for unknown types and fields.
    func testSchemaIndexAddGivesAFieldTheIndexAQueryNeeds() {
        let s = CLISandbox()
        s.signIn()
        s.ck("record", "save", "--type", "Memo", "--name", "m1", "text=hello", "n=3", "blob:BYTES=aGk=", "tags:STRING_LIST=a,b")
        let added = s.ck("schema", "index", "add", "Memo", "recordName", "queryable")
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(added.object["field"] as? String, "___recordID")
        XCTAssertEqual(added.object["added"] as? [String], ["QUERYABLE"])
        XCTAssertEqual(added.object["ckdb"] as? String, #""___recordID" REFERENCE QUERYABLE"#)
        XCTAssertTrue(s.ck("schema", "export").stdout.contains(#""___recordID"   REFERENCE QUERYABLE,"#))
        XCTAssertEqual((s.ck("record", "query", "--type", "Memo").object["records"] as? [Any])?.count, 1)
        // Again: nothing more to add.
        XCTAssertEqual(s.ck("schema", "index", "add", "Memo", "___recordID", "QUERYABLE").object["added"] as? [String], [])
        XCTAssertEqual(s.ck("schema", "index", "add", "Memo", "___createTime", "SORTABLE", "QUERYABLE").object["added"] as? [String], ["QUERYABLE", "SORTABLE"])
        s.assertUnchanged("refusals") {
            assertFailure(s.ck("schema", "index", "add", "Memo", "blob", "QUERYABLE"), exit: 6, contains: "a BYTES field cannot be indexed")
            assertFailure(s.ck("schema", "index", "add", "Memo", "tags", "SORTABLE"), exit: 6, contains: "a LIST field cannot be sorted")
            assertFailure(s.ck("schema", "index", "add", "Memo", "n", "SEARCHABLE"), exit: 6, contains: "only STRING fields can be SEARCHABLE")
            assertFailure(s.ck("schema", "index", "add", "Memo", "nosuch", "QUERYABLE"), exit: 6, contains: "record type 'Memo' has no field 'nosuch'")
            assertFailure(s.ck("schema", "index", "add", "Nope", "x", "QUERYABLE"), exit: 6, contains: "Did not find record type: Nope")
            assertFailure(s.ck("--env", "production", "schema", "index", "add", "Memo", "n", "QUERYABLE"), exit: 6, contains: "schema deploy")
            assertFailure(s.ck("schema", "index", "add", "Memo", "n", "FAST"), exit: 2, contains: "'FAST' is no index")
            assertFailure(s.ck("schema", "index", "add", "Memo", "n"), exit: 2, contains: "missing")
        }
    }

    func testResetDeletesDevelopmentDataAndSchema() {
        let s = CLISandbox()
        s.signIn()
        s.ck("record", "save", "--type", "Kept", "--name", "k")
        XCTAssertEqual(s.ck("schema", "deploy").status, 0)
        s.ck("record", "save", "--type", "Scratch", "--name", "x")
        XCTAssertEqual(s.ck("schema", "reset").status, 0)
        assertFailure(s.ck("record", "get", "x"), exit: 3, contains: "NOT_FOUND")
        let export = s.ck("schema", "export").stdout
        XCTAssertTrue(export.contains("RECORD TYPE Kept"))
        XCTAssertFalse(export.contains("Scratch"))
    }

    func testCustomRolesAndGrantsInThePublicDatabase() throws {
        let s = CLISandbox()
        s.signIn("alice@example.com")
        s.signIn("bob@example.com")
        let f = s.root.appendingPathComponent("roles.ckdb")
        try "DEFINE SCHEMA CREATE ROLE Editor; RECORD TYPE Memo (text STRING, GRANT READ TO \"_world\", GRANT CREATE, WRITE TO Editor);".write(to: f, atomically: true, encoding: .utf8)
        XCTAssertEqual(s.ck("schema", "import", f.path).status, 0)
        s.assertUnchanged("not an editor") {
            assertFailure(s.ck("--db", "public", "record", "save", "--type", "Memo", "--name", "m", "text=x"), exit: 5, contains: "ACCESS_DENIED")
        }
        XCTAssertEqual(s.ck("role", "assign", "Editor", "bob@example.com").status, 0)
        XCTAssertEqual(s.ck("--db", "public", "record", "save", "--type", "Memo", "--name", "m", "text=x").status, 0)
        assertFailure(s.ck("--as", "alice@example.com", "--db", "public", "record", "save", "--name", "m", "--force", "text=y"), exit: 5, contains: "ACCESS_DENIED")
        XCTAssertEqual(s.ck("--as", "alice@example.com", "--db", "public", "record", "get", "m").status, 0, "_world reads")
        assertFailure(s.ck("role", "assign", "Ghost", "bob@example.com"), exit: 6, contains: "not defined")
        assertFailure(s.ck("role", "assign", "Editor", "nobody@example.com"), exit: 3, contains: "NOT_FOUND")
    }
}

enum SchemaTestsText {
    /// Apple's documented example schema (reference §8), kept in Tests/Fixtures.
    static let apple = try! String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/apple-example.ckdb"), encoding: .utf8)
}
