import CKTestSupport
import Foundation
import XCTest

/// `record modify` and `record save` with a value that does not fit its type, held against
/// CloudKit's recorded answer (Tests/Fixtures/wire/records-modify.response.public-per-record-bad-value.json):
/// a per-record BAD_REQUEST among the results, the other operations applied; each command
/// keeps its exit code for a failed item.
final class RecordModifyItemTests: XCTestCase {
    func testABadValueIsAPerRecordBadRequestAndTheOthersAreApplied() {
        let s = CLISandbox()
        s.signIn()
        let body = """
            {"operations": [
              {"operationType": "create", "record": {"recordName": "metadata-swiftversion", "recordType": "Meta", "fields": {"when": {"value": 1747999812347.89, "type": "TIMESTAMP"}}}},
              {"operationType": "create", "record": {"recordName": "fine", "recordType": "Meta", "fields": {"n": {"value": 1}}}}
            ]}
            """
        let r = s.run(["record", "modify"], stdin: body)
        XCTAssertEqual(r.status, 9, "exit 9 when any operation failed: \(r.stderr)")
        let items = r.object["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.count, 2)
        let recorded = WireFixture("records-modify.response.public-per-record-bad-value").records[0]
        Shape.assertSameKeys(items.first, recorded, optional: ["uuid", "ckErrorCode"], "per-record bad value")
        XCTAssertEqual(items.first?["serverErrorCode"] as? String, recorded["serverErrorCode"] as? String)
        XCTAssertTrue((items.first?["reason"] as? String ?? "").hasPrefix("Invalid value, expected type TIMESTAMP"), "\(items)")
        XCTAssertEqual(items.last?["recordName"] as? String, "fine")
        XCTAssertTrue(r.stderr.hasPrefix("ck: PARTIAL_FAILURE: 1 of 2 operations failed (first: BAD_REQUEST: Invalid value, expected type TIMESTAMP"), r.stderr)
        XCTAssertEqual(s.ck("record", "get", "fine").status, 0, "the other operation is applied")
        assertFailure(s.ck("record", "get", "metadata-swiftversion"), exit: 3)
        // record save: the one failed item is the command's error (BAD_REQUEST, exit 6).
        s.assertUnchanged("save of a bad value") {
            assertFailure(s.run(["record", "save", "--stdin"], stdin: #"{"recordName":"x","recordType":"Meta","fields":{"n":{"value":"43","type":"INT64"}}}"#),
                          exit: 6, contains: "BAD_REQUEST")
        }
    }
}
