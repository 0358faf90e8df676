import CKTestSupport
import Foundation
import XCTest

/// Issue 30, item 10: the completion offers `--op` values, record names and subscription IDs
/// (asked of ck itself, as zone names are), in the bash script the binary generates.
final class CompletionListingTests: XCTestCase {
    func testBashCompletesOpsRecordNamesAndSubscriptionIDs() throws {
        let bash = try XCTUnwrap(InstallTests.tool("bash"), "bash is needed to test its completion")
        let s = Sandbox()
        func complete(_ words: String...) -> [String] { InstallTests.bashComplete(bash, s, words) }

        // The operations `fault add --help` lists (every endpoint), those of a prefix for a prefix.
        let help = s.run(["fault", "add", "--help"]).stdout
        let listed = try XCTUnwrap(help.range(of: "the client operation to fail: ").map { help[$0.upperBound...] }?.prefix { $0 != "\n" })
        let ops = listed.components(separatedBy: ", ").filter { $0.range(of: "^[a-z]+(/[a-z]+)+$", options: .regularExpression) != nil }
        XCTAssertTrue(ops.contains("records/modify") && ops.contains("changes/zone"), "\(ops)")
        XCTAssertEqual(Set(complete("ck", "fault", "add", "--op", "records/")), Set(ops.filter { $0.hasPrefix("records/") }))
        XCTAssertEqual(Set(complete("ck", "fault", "add", "--op", "")), Set(ops))
        XCTAssertFalse(complete("ck", "--format", "").contains("aps"), "aps belongs to 'notifications' alone")

        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Lists"]).status, 0)
        for name in ["todo-1", "todo-2"] {
            XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", name, "title=x"]).status, 0)
        }
        XCTAssertEqual(s.run(["record", "save", "--type", "Note", "--name", "note-1", "text=x"]).status, 0)
        XCTAssertEqual(s.run(["subscribe", "--id", "all-changes"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "subscribe", "zone"]).status, 0)

        let bin = Sandbox.binary.path
        XCTAssertEqual(Set(complete(bin, "--zone", "Lists", "record", "get", "")), ["todo-1", "todo-2"], "the records of the zone the line names")
        XCTAssertEqual(complete(bin, "record", "delete", "no"), ["note-1"])
        XCTAssertEqual(Set(complete(bin, "subscription", "get", "")), ["all-changes", "zone-Lists"])
        XCTAssertEqual(complete(bin, "subscription", "delete", "al"), ["all-changes"])
    }
}
