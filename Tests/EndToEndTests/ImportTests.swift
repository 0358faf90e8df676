import Foundation
import XCTest

/// `ck import` (issue 13): re-importing unchanged records writes nothing; a summary line on
/// stderr, none with -q.
final class ImportTests: XCTestCase {
    func testReimportingAnExportWritesNothing() {
        let s = Sandbox()
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
