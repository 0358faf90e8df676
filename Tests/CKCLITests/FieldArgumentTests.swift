import CKTestSupport
import Foundation
import XCTest

/// `ck record save` field arguments (SPEC §4, Docs/records.md "Field arguments"): untyped values
/// take the schema's type, inference follows one rule, dates without an offset are local time,
/// `@file` / `@-` read STRING and BYTES values, `--record-type` is `--type`.
final class FieldArgumentTests: XCTestCase {
    func signedIn() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        return s
    }

    /// Saves one record and returns its fields as `name → [type, value]`.
    func save(_ s: CLISandbox, _ args: [String], stdin: String? = nil, env: [String: String] = [:],
              file: StaticString = #filePath, line: UInt = #line) -> [String: [String: Any]] {
        let r = s.run(["record", "save"] + args, stdin: stdin, env: env)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        // Nothing on stderr but the announcement of fields the save defined (SPEC §4).
        XCTAssertEqual(r.stderr.split(separator: "\n").filter { !$0.hasPrefix("ck: defined field '") }, [], file: file, line: line)
        return (r.record["fields"] as? [String: [String: Any]]) ?? [:]
    }

    func typeAndValue(_ f: [String: [String: Any]], _ name: String) -> String {
        guard let v = f[name] else { return "missing" }
        let value = v["value"].map { x -> String in
            if let s = x as? String { return "\"\(s)\"" }
            return "\(x)"
        } ?? "nil"
        return "\(v["type"] as? String ?? "?") \(value)"
    }

    /// A Note type in the schema: title STRING, score DOUBLE, due TIMESTAMP, priority INT64,
    /// blob BYTES.
    func withNoteSchema() -> CLISandbox {
        let s = signedIn()
        _ = save(s, ["--type", "Note", "--name", "seed", "title:STRING=seed", "score:DOUBLE=1.5", "due:TIMESTAMP=2019-10-28T00:00:00Z",
                     "priority:INT64=1", "blob:BYTES=aGk="])
        return s
    }

    func testUntypedValuesTakeTheSchemasType() {
        let s = withNoteSchema()
        for text in ["-5", "2019-10-28", "true", "02139", "1e5"] {
            let f = save(s, ["--type", "Note", "title=\(text)"])
            XCTAssertEqual(typeAndValue(f, "title"), "STRING \"\(text)\"", "title=\(text) into a STRING field")
        }
        let f = save(s, ["--type", "Note", "score=5", "due=2019-10-28T00:00:00Z", "priority=true"])
        XCTAssertEqual(typeAndValue(f, "score"), "DOUBLE 5.0", "an integer into a DOUBLE field is a DOUBLE")
        XCTAssertEqual(typeAndValue(f, "due"), "TIMESTAMP 1572220800000")
        XCTAssertEqual(typeAndValue(f, "priority"), "INT64 1")
        // Once the type is known, any decimal spelling of it is read.
        let g = save(s, ["--type", "Note", "score=.5", "priority=007", "due=1572220800000", "blob=aGVsbG8="])
        XCTAssertEqual(typeAndValue(g, "score"), "DOUBLE 0.5")
        XCTAssertEqual(typeAndValue(g, "priority"), "INT64 7")
        XCTAssertEqual(typeAndValue(g, "due"), "TIMESTAMP 1572220800000", "an integer into a TIMESTAMP field is milliseconds")
        XCTAssertEqual(typeAndValue(g, "blob"), "BYTES \"aGVsbG8=\"", "base64 into a BYTES field is bytes")
        // An update without --type: the existing record's type names the schema to use.
        let u = save(s, ["--name", "seed", "--force", "title=42"])
        XCTAssertEqual(typeAndValue(u, "title"), "STRING \"42\"")
    }

    func testAValueThatCannotBeTheSchemasTypeIsBadRequest() {
        let s = withNoteSchema()
        let cases: [(String, String)] = [
            ("priority=high", "field 'priority' is INT64 in the schema of record type 'Note' but 'high' is not a 64-bit integer"),
            ("priority=12345678901234567890", "field 'priority' is INT64 in the schema of record type 'Note' but '12345678901234567890' is not a 64-bit integer"),
            ("score=NaN", "field 'score' is DOUBLE in the schema of record type 'Note' but 'NaN' is not a finite decimal number"),
            ("due=yesterday", "field 'due' is TIMESTAMP in the schema of record type 'Note' but 'yesterday' is not an ISO-8601 date"),
            ("blob=!!", "field 'blob' is BYTES in the schema of record type 'Note' but '!!' is not base64"),
        ]
        for (arg, message) in cases {
            s.assertUnchanged(arg) {
                assertFailure(s.run(["record", "save", "--type", "Note", "--name", "x", arg]), exit: 6, contains: "BAD_REQUEST: " + message)
            }
        }
        // An explicit type that differs from the schema's is the schema's type mismatch.
        s.assertUnchanged("explicit STRING into INT64") {
            assertFailure(s.run(["record", "save", "--type", "Note", "--name", "x", "priority:STRING=5"]), exit: 6,
                          contains: "the schema has INT64, the value is STRING")
        }
    }

    func testInferenceForNewFieldsFollowsJSONNumberSyntax() {
        let s = signedIn()
        let f = save(s, ["--type", "Fresh", "--name", "f",
                         "t=true", "fa=false", "upper=TRUE", "cap=True",
                         "i=-12", "zero=0", "negzero=-0", "min=-9223372036854775808",
                         "over=9223372036854775808", "twenty=12345678901234567890",
                         "zip=02139", "plus=+5", "lead=.5", "trail=5.", "d=2.50", "e=1e5", "ne=-1.5E-3", "huge=1e999",
                         "nan=NaN", "inf=inf", "date=2019-10-28T10:00:00Z", "text=hello"])
        let want: [String: String] = [
            "t": "INT64 1", "fa": "INT64 0", "upper": "STRING \"TRUE\"", "cap": "STRING \"True\"",
            "i": "INT64 -12", "zero": "INT64 0", "negzero": "INT64 0", "min": "INT64 -9223372036854775808",
            "over": "STRING \"9223372036854775808\"", "twenty": "STRING \"12345678901234567890\"",
            "zip": "STRING \"02139\"", "plus": "STRING \"+5\"", "lead": "STRING \".5\"", "trail": "STRING \"5.\"",
            "d": "DOUBLE 2.5", "e": "DOUBLE 100000.0", "ne": "DOUBLE -0.0015", "huge": "STRING \"1e999\"",
            "nan": "STRING \"NaN\"", "inf": "STRING \"inf\"", "date": "TIMESTAMP 1572256800000", "text": "STRING \"hello\"",
        ]
        for (name, expected) in want { XCTAssertEqual(typeAndValue(f, name), expected, name) }
    }

    func testDatesWithoutAnOffsetAreLocalTime() {
        let s = signedIn()
        let ny = ["TZ": "America/New_York"]
        let f = save(s, ["--type", "When", "--name", "w", "day:TIMESTAMP=2026-11-20", "minute:TIMESTAMP=2026-11-20T10:00",
                         "second:TIMESTAMP=2026-11-20T10:00:00", "summer:TIMESTAMP=2026-07-01T12:00", "gap:TIMESTAMP=2026-03-08T02:30",
                         "twice:TIMESTAMP=2026-11-01T01:30", "utc:TIMESTAMP=2026-11-20T10:00:00Z",
                         "paris:TIMESTAMP=2026-11-20T10:00:00+01:00", "inferred=2026-11-20"], env: ny)
        XCTAssertEqual(typeAndValue(f, "day"), "TIMESTAMP 1795150800000", "midnight in New York is 05:00Z in November")
        XCTAssertEqual(typeAndValue(f, "minute"), "TIMESTAMP 1795186800000")
        XCTAssertEqual(typeAndValue(f, "second"), "TIMESTAMP 1795186800000")
        XCTAssertEqual(typeAndValue(f, "summer"), "TIMESTAMP 1782921600000", "daylight saving time: 16:00Z")
        XCTAssertEqual(typeAndValue(f, "gap"), "TIMESTAMP 1772955000000", "a skipped hour moves forward, as Calendar does")
        XCTAssertEqual(typeAndValue(f, "twice"), "TIMESTAMP 1793511000000", "a repeated hour is its first occurrence")
        XCTAssertEqual(typeAndValue(f, "utc"), "TIMESTAMP 1795168800000", "Z is exact whatever TZ says")
        XCTAssertEqual(typeAndValue(f, "paris"), "TIMESTAMP 1795165200000", "an offset is exact")
        XCTAssertEqual(typeAndValue(f, "inferred"), "TIMESTAMP 1795150800000", "an inferred date is local too")
        let tokyo = save(s, ["--type", "When", "--name", "t", "day=2026-07-01", "utc=2026-11-20T10:00:00Z"], env: ["TZ": "Asia/Tokyo"])
        XCTAssertEqual(typeAndValue(tokyo, "day"), "TIMESTAMP 1782831600000")
        XCTAssertEqual(typeAndValue(tokyo, "utc"), "TIMESTAMP 1795168800000")
        let utc = save(s, ["--type", "When", "--name", "u", "day=2019-10-28"], env: ["TZ": "UTC"])
        XCTAssertEqual(typeAndValue(utc, "day"), "TIMESTAMP 1572220800000")
    }

    func testFilesAndStdinForStringsAndBytes() throws {
        let s = signedIn()
        let text = s.root.appendingPathComponent("body.txt")
        try "line one\nline two\n".write(to: text, atomically: true, encoding: .utf8)
        let binary = s.root.appendingPathComponent("blob.bin")
        try Data([0, 255, 1, 128]).write(to: binary)
        let f = save(s, ["--type", "Doc", "--name", "d", "body:STRING=@body.txt", "raw:BYTES=@blob.bin", "plain=@body.txt",
                         "handle=@@alice", "tagged:STRING=@@x", "pic:ASSET=@blob.bin"])
        XCTAssertEqual(typeAndValue(f, "body"), "STRING \"line one\nline two\n\"", "the file's content, verbatim")
        XCTAssertEqual(typeAndValue(f, "raw"), "BYTES \"AP8BgA==\"")
        XCTAssertEqual(typeAndValue(f, "plain"), "STRING \"line one\nline two\n\"", "untyped @file is a STRING")
        XCTAssertEqual(typeAndValue(f, "handle"), "STRING \"@alice\"", "@@ is a literal @")
        XCTAssertEqual(typeAndValue(f, "tagged"), "STRING \"@x\"")
        XCTAssertEqual(f["pic"]?["type"] as? String, "ASSETID", "@file is still an asset for ASSET")
        // Untyped into a BYTES field: the file's bytes.
        let g = save(s, ["--type", "Doc", "--name", "e", "raw=@blob.bin", "body=@-"], stdin: "from stdin")
        XCTAssertEqual(typeAndValue(g, "raw"), "BYTES \"AP8BgA==\"")
        XCTAssertEqual(typeAndValue(g, "body"), "STRING \"from stdin\"", "@- reads stdin")
        let b = save(s, ["--type", "Doc", "--name", "b", "raw:BYTES=@-"], stdin: "hi")
        XCTAssertEqual(typeAndValue(b, "raw"), "BYTES \"aGk=\"")

        s.assertUnchanged("two fields reading stdin") {
            assertFailure(s.run(["record", "save", "--type", "Doc", "--name", "x", "a:STRING=@-", "b:STRING=@-"], stdin: "x"), exit: 2,
                          contains: "only one value can be read from stdin (@-)")
        }
        s.assertUnchanged("--stdin and @-") {
            assertFailure(s.run(["record", "save", "--stdin", "--type", "Doc", "--name", "x", "a:STRING=@-"], stdin: "{}"), exit: 2,
                          contains: "cannot read its value there (@-)")
        }
        s.assertUnchanged("a missing file") {
            assertFailure(s.run(["record", "save", "--type", "Doc", "--name", "x", "body=@nope.txt"]), exit: 6,
                          contains: "field 'body': cannot read 'nope.txt': no such file (a value starting with @ names a file; write @@ for a literal @)")
        }
        s.assertUnchanged("bytes that are not text into a STRING") {
            assertFailure(s.run(["record", "save", "--type", "Doc", "--name", "x", "body:STRING=@blob.bin"]), exit: 6,
                          contains: "is not UTF-8 text (for raw bytes use body:BYTES=@blob.bin)")
        }
    }

    func testRecordTypeIsCktoolsSpellingOfType() {
        let s = signedIn()
        let f = save(s, ["--record-type", "Memo", "--name", "m", "n=1"])
        XCTAssertEqual(typeAndValue(f, "n"), "INT64 1")
        XCTAssertEqual(s.run(["schema", "index", "add", "Memo", "___recordID", "QUERYABLE"]).status, 0)
        let r = s.run(["record", "query", "--record-type", "Memo"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.object["records"] as? [[String: Any]])?.first?["recordType"] as? String, "Memo")
        XCTAssertTrue(s.run(["record", "save", "--help"]).stdout.contains("--record-type"))
    }
}
