import CKTestSupport
import Foundation
import XCTest

/// The CLI's side of the schema (issue 30, item 9): a field defined just in time is announced
/// on stderr from the save's result; `:BOOL` and `:DATE` point at INT64 and TIMESTAMP;
/// `schema export --format json` prints the schema as JSON (without it, the .ckdb text).
final class SchemaAnnouncementTests: XCTestCase {
    func testAFieldDefinedByASaveIsAnnouncedOnStderr() {
        let s = CLISandbox()
        s.signIn()
        let r = s.ck("record", "save", "--type", "Todo", "--name", "t1", "done=yes", "n=3")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("defined field 'done' as STRING"), r.stderr)
        XCTAssertTrue(r.stderr.contains("defined field 'n' as INT64"), r.stderr)
        XCTAssertNotNil(r.parsed, "stdout stays the records/modify body")
        // Known fields: nothing to announce.
        let again = s.ck("record", "save", "--type", "Todo", "--name", "t2", "done=no")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stderr, "")
        // -q keeps stderr quiet.
        let quiet = s.ck("-q", "record", "save", "--type", "Todo", "--name", "t3", "extra=1")
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertEqual(quiet.stderr, "")
        // record modify too.
        let modify = s.run(["record", "modify"], stdin: #"{"operations":[{"operationType":"create","record":{"recordName":"m1","recordType":"Todo","fields":{"due":{"value":0,"type":"TIMESTAMP"}}}}]}"#)
        XCTAssertEqual(modify.status, 0, modify.stderr)
        XCTAssertTrue(modify.stderr.contains("defined field 'due' as TIMESTAMP"), modify.stderr)
    }

    func testBoolAndDateTypeSuffixesPointAtCloudKitsTypes() {
        let s = CLISandbox()
        s.signIn()
        let bool = s.ck("record", "save", "--type", "Todo", "flag:BOOL=true")
        XCTAssertEqual(bool.status, 2)
        XCTAssertTrue(bool.stderr.contains("INT64"), bool.stderr)
        XCTAssertTrue(bool.stderr.contains("flag:INT64=1") || bool.stderr.contains("flag=true"), bool.stderr)
        let date = s.ck("record", "save", "--type", "Todo", "when:DATE=2020-01-01")
        XCTAssertEqual(date.status, 2)
        XCTAssertTrue(date.stderr.contains("when:TIMESTAMP=2020-01-01"), date.stderr)
        for alias in ["boolean", "Bool", "DATETIME"] {
            let r = s.ck("record", "save", "--type", "Todo", "x:\(alias)=1")
            XCTAssertEqual(r.status, 2)
            XCTAssertTrue(r.stderr.contains("INT64") || r.stderr.contains("TIMESTAMP"), r.stderr)
        }
    }

    func testSchemaExportFormatJSONIsTheSchemaAsJSON() throws {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("record", "save", "--type", "Todo", "--name", "t1", "title=x").status, 0)
        let text = s.ck("schema", "export")
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.hasPrefix("DEFINE SCHEMA"), "without --format, the .ckdb text")
        let json = s.ck("schema", "export", "--format", "json")
        XCTAssertEqual(json.status, 0, json.stderr)
        let types = try XCTUnwrap(json.object["recordTypes"] as? [[String: Any]], json.stdout)
        XCTAssertEqual(types.compactMap { $0["name"] as? String }, ["Todo", "Users"])
        let fields = types[0]["fields"] as? [[String: Any]] ?? []
        XCTAssertEqual(fields.first { $0["name"] as? String == "title" }?["type"] as? String, "STRING")
        XCTAssertEqual(json.object["roles"] as? [String], [])
        // $CK_FORMAT=json, set for every command of a script, leaves the schema text.
        XCTAssertEqual(s.run(["schema", "export"], env: ["CK_FORMAT": "json"]).stdout, text.stdout)
    }
}
