import CKTestSupport
import XCTest

/// The README's quick start, as a newcomer runs it.
final class QuickStartTests: XCTestCase {
    func testSaveAndReadBack() throws {
        let s = Sandbox()
        XCTAssertEqual(s.ck("account", "signin", "alice@example.com").status, 0)
        let saved = s.ck("record", "save", "--type", "ToDoItem", "--name", "todo-1", "title=Get apples",
                         "dueDate:TIMESTAMP=2019-10-28", "isCompleted=false")
        XCTAssertEqual(saved.status, 0, saved.stderr)
        XCTAssertEqual(saved.stderr, ["dueDate' as TIMESTAMP", "isCompleted' as INT64", "title' as STRING"]
            .map { "ck: defined field '\($0) in new record type 'ToDoItem'\n" }.joined(), "the new fields announced, nothing else")
        let got = s.ck("record", "get", "todo-1")
        XCTAssertEqual(got.status, 0, got.stderr)
        let rec = got.record
        XCTAssertEqual(rec["recordName"] as? String, "todo-1")
        XCTAssertEqual(rec["recordType"] as? String, "ToDoItem")
        let fields = rec["fields"] as? [String: [String: Any]]
        XCTAssertEqual(fields?["title"]?["value"] as? String, "Get apples")
        XCTAssertEqual(fields?["dueDate"]?["type"] as? String, "TIMESTAMP")
        XCTAssertEqual(fields?["dueDate"]?["value"] as? Int, 1_572_220_800_000)
        XCTAssertEqual(fields?["isCompleted"]?["value"] as? Int, 0)
        XCTAssertEqual(got.stdout, s.ck("record", "get", "todo-1").stdout, "same state, same bytes")
    }
}
