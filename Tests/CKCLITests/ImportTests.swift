import CKTestSupport
import Foundation
import XCTest

/// `ck import` (issue 13): re-importing unchanged records writes nothing; a summary line on
/// stderr, none with -q.
final class ImportTests: XCTestCase {
    /// NDJSON lines are parsed on every core, a chunk at a time: the error is still the first
    /// bad line in the input, by its number (blank lines counted), and nothing is written.
    func testTheFirstBadLineIsTheErrorAndNothingIsWritten() {
        let s = CLISandbox()
        s.signIn()
        var lines = (0..<1500).map { "{\"recordName\": \"r\($0)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \($0)}}}" }
        lines[1] = "  "
        lines[600] = "{bad"
        lines[601] = "[1]"
        lines[1200] = "{bad"
        /// The import of `lines` fails with `message` (exit 6) and writes nothing.
        func refused(_ what: String, _ message: String, file: StaticString = #filePath, at line: UInt = #line) {
            s.assertUnchanged(what, file: file, line: line) {
                assertFailure(s.run(["--zone", "Z", "import"], stdin: lines.joined(separator: "\n")), exit: 6, contains: message, file: file, line: line)
            }
        }
        refused("bad lines in several chunks", "import: line 601 is not valid JSON")
        lines[600] = lines[0].replacingOccurrences(of: "r0", with: "r600")
        refused("two bad lines in one chunk", "import: line 602 must be a record object, got array")
        // The line is named inside the record's own checks too (a context made only for errors).
        lines[601] = "{\"recordName\": 5, \"recordType\": \"T\"}"
        lines[1200] = "{\"recordType\": \"T\"}"
        refused("a record's own errors name their line", "import: line 602: recordName must be a string")
        lines[601] = lines[0].replacingOccurrences(of: "r0", with: "r601")
        refused("a missing name names its line", "import: line 1201: record needs a recordName")
    }

    /// Each chunk is parsed while the one before it is committed, and each batch's results are
    /// encoded together: the results still come one per record, in input order, failures in place.
    func testResultsComeInInputOrderAcrossChunksAndBatches() {
        let s = CLISandbox()
        s.signIn()
        let count = 1300
        var lines = (0..<count).map { "{\"recordName\": \"r\($0)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \($0)}}}" }
        // A value of another type than the schema's fails that record alone (INVALID_ARGUMENTS).
        let failing: Set<Int> = [513, 1100]
        for i in failing { lines[i] = "{\"recordName\": \"r\(i)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \"text\"}}}" }
        let out = s.run(["--zone", "Z", "import"], stdin: lines.joined(separator: "\n"))
        XCTAssertEqual(out.status, 9, out.stderr)
        let records = out.object["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(records.count, count)
        XCTAssertEqual(records.map { $0["recordName"] as? String }, (0..<count).map { "r\($0)" })
        for (i, r) in records.enumerated() {
            if failing.contains(i) {
                XCTAssertNotNil(r["serverErrorCode"], "record \(i): \(r)")
            } else {
                XCTAssertNotNil(r["recordChangeTag"] as? String, "record \(i): \(r)")
                XCTAssertEqual((r["zoneID"] as? [String: Any])?["zoneName"] as? String, "Z")
                XCTAssertEqual(Set(r.keys), ["recordName", "recordChangeTag", "zoneID"])
            }
        }
        // NDJSON: the same items, one a line, in the same order.
        let again = s.run(["--zone", "Y", "--format", "ndjson", "import"], stdin: lines.joined(separator: "\n"))
        XCTAssertEqual(again.status, 9, again.stderr)
        let items = again.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(items.map { $0?["recordName"] as? String }, (0..<count).map { "r\($0)" })
    }

    func testReimportingAnExportWritesNothing() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "L").status, 0)
        for i in 0..<5 { XCTAssertEqual(s.ck("--zone", "L", "record", "save", "--type", "T", "--name", "r\(i)", "n=\(i)").status, 0) }
        let exported = s.ck("--zone", "L", "export").stdout
        let token = s.ck("--zone", "L", "zone", "changes", "--no-save").zoneChanges["syncToken"] as! String
        s.assertUnchanged("re-import of an unchanged export") {
            let again = s.run(["import"], stdin: exported)
            XCTAssertEqual(again.status, 0, again.stderr)
            XCTAssertTrue(again.stderr.hasPrefix("ck: import: 5 records (0 written, 5 unchanged, 0 failed) in "), again.stderr)
            XCTAssertEqual(again.stderr.split(separator: "\n").count, 1)
            // The tags printed are the records' own.
            XCTAssertEqual((again.object["records"] as? [[String: Any]])?.compactMap { $0["recordChangeTag"] as? String }.sorted(), ["1", "2", "3", "4", "5"])
        }
        let none = s.ck("--zone", "L", "zone", "changes", "--since", token, "--no-save")
        XCTAssertEqual((none.zoneChanges["records"] as? [Any])?.count, 0, "no new change")
        // One record changed in the file: only it is written.
        let edited = exported.replacingOccurrences(of: "\"value\":3", with: "\"value\":33")
        let once = s.run(["import"], stdin: edited)
        XCTAssertTrue(once.stderr.contains("(1 written, 4 unchanged, 0 failed)"), once.stderr)
        let changed = s.ck("--zone", "L", "zone", "changes", "--since", token, "--no-save")
        XCTAssertEqual((changed.zoneChanges["records"] as? [[String: Any]])?.map { $0["recordName"] as? String }, ["r3"])
        // -q: no summary.
        let quiet = s.run(["-q", "import"], stdin: edited)
        XCTAssertEqual(quiet.status, 0)
        XCTAssertEqual(quiet.stderr, "")
    }
}
