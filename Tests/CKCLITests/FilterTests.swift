import CKTestSupport
import Foundation
import XCTest

/// `ck record query --filter 'FIELD OP VALUE'` (SPEC §4, Docs/records.md "Filters"): symbols
/// with or without spaces, cktool's comparator names, quoted values with `\"`, values typed by
/// the schema, and a value that cannot match the field's type refused with BAD_REQUEST.
final class FilterTests: XCTestCase {
    /// Items t1…t3 (title, priority INT64, score DOUBLE, due TIMESTAMP, tags STRING_LIST,
    /// place LOCATION, code STRING), plus a title that holds quotes, one that looks like a
    /// number and one that looks like a date.
    func seeded() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        let rows: [[String]] = [
            ["--name", "t1", "title=Get apples", "priority=1", "score=1.5", "due=2026-11-20T10:00:00Z", "tags:STRING_LIST=home,food",
             "place:LOCATION=37.33,-122.03", "code:STRING=-5", "note=the quick brown fox"],
            ["--name", "t2", "title=Get pears", "priority=2", "score:DOUBLE=5", "due=2026-11-20T16:00:00Z", "tags:STRING_LIST=work",
             "place:LOCATION=48.85,2.35", "code:STRING=2019-10-28", "note=lazy dog"],
            ["--name", "t3", #"title=say "hi""#, "priority=3", "score=7.25", "due=2026-11-21T12:00:00Z", "tags:STRING_LIST=home",
             "place:LOCATION=37.4,-122.1", "code:STRING=007", "note=brown bear"],
        ]
        for r in rows {
            let out = s.run(["record", "save", "--type", "Item"] + r)
            precondition(out.status == 0, out.stderr)
        }
        // Filters on recordName and createdTimestamp need their system fields' indexes.
        for (field, index) in [("___recordID", "QUERYABLE"), ("___createTime", "SORTABLE")] {
            precondition(s.run(["schema", "index", "add", "Item", field, index]).status == 0)
        }
        return s
    }

    /// The names of the Items the filters select, by priority.
    func query(_ s: CLISandbox, _ filters: [String], env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let r = s.run(["record", "query", "--type", "Item", "--sort", "priority"] + filters.flatMap { ["--filter", $0] }, env: env)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        return names(r)
    }

    func testSymbolsWorkWithAndWithoutSpaces() {
        let s = seeded()
        for f in ["priority=2", "priority==2", "priority = 2", "priority == 2", "  priority   ==   2  ", "priority\t==\t2"] {
            XCTAssertEqual(query(s, [f]), ["t2"], f)
        }
        XCTAssertEqual(query(s, ["priority!=2"]), ["t1", "t3"])
        XCTAssertEqual(query(s, ["priority<=2"]), ["t1", "t2"])
        XCTAssertEqual(query(s, ["priority>=2"]), ["t2", "t3"])
        XCTAssertEqual(query(s, ["priority<2"]), ["t1"])
        XCTAssertEqual(query(s, ["priority>2"]), ["t3"])
        XCTAssertEqual(query(s, ["priority>-1"]), ["t1", "t2", "t3"], "a sign after the symbol belongs to the value")
        XCTAssertEqual(query(s, ["title = get pears"]), ["t2"], "the value is the rest, spaces included")
    }

    func testCktoolComparatorNames() {
        let s = seeded()
        let cases: [(String, [String])] = [
            ("priority EQUALS 2", ["t2"]), ("priority equals 2", ["t2"]), ("priority NOT_EQUALS 2", ["t1", "t3"]),
            ("priority LESS_THAN 2", ["t1"]), ("priority LESS_THAN_OR_EQUALS 2", ["t1", "t2"]),
            ("priority GREATER_THAN 2", ["t3"]), ("priority GREATER_THAN_OR_EQUALS 2", ["t2", "t3"]),
            ("priority IN 1,3", ["t1", "t3"]), ("priority NOT_IN 1,3", ["t2"]), ("priority IN [1, 3]", ["t1", "t3"]),
            ("title BEGINS_WITH Get", ["t1", "t2"]), ("title NOT_BEGINS_WITH Get", ["t3"]),
            ("note CONTAINS_ALL_TOKENS brown fox", ["t1"]), ("note CONTAINS_ANY_TOKENS fox bear", ["t1", "t3"]),
            ("tags LIST_CONTAINS home", ["t1", "t3"]), ("tags NOT_LIST_CONTAINS home", ["t2"]),
            ("tags LIST_CONTAINS_ANY food,work", ["t1", "t2"]), ("tags LIST_NOT_CONTAINS_ANY food,work", ["t3"]),
            ("tags LIST_CONTAINS_ALL home,food", ["t1"]), ("tags LIST_MEMBER_BEGINS_WITH wo", ["t2"]),
            ("place NEAR 37.33,-122.03 20km", ["t1", "t3"]),
        ]
        for (f, want) in cases { XCTAssertEqual(query(s, [f]), want, f) }
    }

    func testQuotedValuesTakeBackslashEscapes() {
        let s = seeded()
        XCTAssertEqual(query(s, [#"title == "say \"hi\"""#]), ["t3"])
        XCTAssertEqual(query(s, [#"title=="say \"hi\"""#]), ["t3"])
        XCTAssertEqual(query(s, [#"title IN "say \"hi\"", Get apples"#]), ["t1", "t3"], "quoted list items may hold quotes")
        XCTAssertEqual(query(s, [#"title == "  Get apples""#]), [], "quotes keep the spaces")
        s.assertUnchanged("an unclosed quote") {
            assertFailure(s.run(["record", "query", "--type", "Item", "--filter", #"title == "say \"hi\""#]), exit: 2,
                          contains: "the quoted value \"say \\\"hi\\\" is not closed or has a bad escape")
        }
    }

    func testValuesTakeTheSchemasType() {
        let s = seeded()
        XCTAssertEqual(query(s, ["code == -5"]), ["t1"], "-5 against a STRING field is the string \"-5\"")
        XCTAssertEqual(query(s, ["code == 2019-10-28"]), ["t2"], "a date against a STRING field is a string")
        XCTAssertEqual(query(s, ["code == 007"]), ["t3"], "a leading zero against a STRING field is kept")
        XCTAssertEqual(query(s, ["score == 5"]), ["t2"], "an integer against a DOUBLE field")
        XCTAssertEqual(query(s, ["score > 1.5"]), ["t2", "t3"])
        XCTAssertEqual(query(s, ["priority == 02"]), ["t2"], "a number against an INT64 field may have leading zeros")
        XCTAssertEqual(query(s, ["due == 1795168800000"]), ["t1"], "milliseconds against a TIMESTAMP field")
        XCTAssertEqual(query(s, ["recordName == t2"]), ["t2"], "recordName is a reference: a record name")
        XCTAssertEqual(query(s, ["createdTimestamp > 2000-01-01"]), ["t1", "t2", "t3"])
        // A field the schema does not know has no index: refused, in development as in production.
        assertFailure(s.run(["record", "query", "--type", "Item", "--filter", "nosuch == 3"]), exit: 6, contains: "Field 'nosuch' is not marked queryable")
    }

    func testTimestampFiltersReadDatesWithoutAnOffsetAsLocalTime() {
        let s = seeded()
        // due: t1 2026-11-20T10:00Z, t2 2026-11-20T16:00Z, t3 2026-11-21T12:00Z.
        XCTAssertEqual(query(s, ["due < 2026-11-21"], env: ["TZ": "UTC"]), ["t1", "t2"])
        XCTAssertEqual(query(s, ["due < 2026-11-21"], env: ["TZ": "Asia/Tokyo"]), ["t1"], "midnight in Tokyo is 15:00Z the day before")
        XCTAssertEqual(query(s, ["due >= 2026-11-20T11:00"], env: ["TZ": "America/New_York"]), ["t2", "t3"], "11:00 in New York is 16:00Z")
        XCTAssertEqual(query(s, ["due >= 2026-11-20T11:00Z"], env: ["TZ": "America/New_York"]), ["t2", "t3"])
        XCTAssertEqual(query(s, ["due >= 2026-11-20T10:00:00+00:00"], env: ["TZ": "America/New_York"]), ["t1", "t2", "t3"], "an offset is exact")
    }

    func testAValueThatCannotMatchTheFieldsTypeIsBadRequest() {
        let s = seeded()
        let cases: [(String, String)] = [
            ("priority > abc", "filter 'priority > abc': field 'priority' is INT64 in the schema of record type 'Item' but 'abc' is not a 64-bit integer"),
            ("priority IN 1,x", "field 'priority' is INT64 in the schema of record type 'Item' but 'x' is not a 64-bit integer"),
            ("score < cheap", "field 'score' is DOUBLE in the schema of record type 'Item' but 'cheap' is not a finite decimal number"),
            ("due < yesterday", "field 'due' is TIMESTAMP in the schema of record type 'Item' but 'yesterday' is not an ISO-8601 date"),
            ("createdTimestamp > soon", "field 'createdTimestamp' is TIMESTAMP (a system field) but 'soon' is not an ISO-8601 date"),
            ("priority BEGINS_WITH 1", "BEGINS_WITH needs a STRING field, but 'priority' is INT64 in the schema of record type 'Item'"),
            ("title NEAR 37.33,-122.03 5km", "NEAR needs a LOCATION field, but 'title' is STRING in the schema of record type 'Item'"),
            ("priority == STRING:2", "filter on 'priority': field 'priority' is INT64 in the schema of record type 'Item' but the value \"2\" is STRING"),
        ]
        for (f, message) in cases {
            s.assertUnchanged(f) {
                let r = s.run(["record", "query", "--type", "Item", "--filter", f])
                assertFailure(r, exit: 6, contains: message)
                XCTAssertTrue(r.stderr.hasPrefix("ck: BAD_REQUEST: filter "), r.stderr)
            }
        }
        // The same rule for a Web Services records/query body.
        let body = #"{"query": {"recordType": "Item", "filterBy": [{"fieldName": "priority", "comparator": "EQUALS", "fieldValue": {"value": "abc"}}]}}"#
        s.assertUnchanged("a records/query body") {
            assertFailure(s.run(["record", "query"], stdin: body), exit: 6,
                          contains: "filter on 'priority': field 'priority' is INT64 in the schema of record type 'Item' but the value \"abc\" is STRING")
        }
        let typed = #"{"query": {"recordType": "Item", "filterBy": [{"fieldName": "priority", "comparator": "EQUALS", "fieldValue": {"value": 2, "type": "INT64"}}]}}"#
        XCTAssertEqual((s.run(["record", "query"], stdin: typed).object["records"] as? [[String: Any]])?.count, 1)
    }

    func testMalformedFiltersAreUsageErrors() {
        let s = seeded()
        for (f, message) in [("priority ~ 3", "unknown comparator '~'"), ("priority =< 3", "unknown comparator '=<'"),
                             ("priority", "must look like 'FIELD OP VALUE'"), ("priority ==", "must look like 'FIELD OP VALUE'"),
                             ("== 3", "must look like 'FIELD OP VALUE'"), ("place NEAR 37,-122", "NEAR needs 'lat,lon RADIUS'")] {
            s.assertUnchanged(f) {
                assertFailure(s.run(["record", "query", "--type", "Item", "--filter", f]), exit: 2, contains: message)
            }
        }
    }
}
