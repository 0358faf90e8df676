import CKCore
import CKModel
import CKTestSupport
import Foundation
import XCTest

/// Every command that reads a request from stdin reads at most a request's bytes (2 MB,
/// reference §6) and refuses more with LIMIT_EXCEEDED (exit 8), writing nothing (issue 30,
/// item 6). An asset's bytes (`name:ASSETID=@-`) may take the asset limit; `ck import`, a bulk
/// load and no single request, reads all. The memory of the binary is EndToEndTests'
/// StdinMemoryTests.
final class StdinLimitTests: XCTestCase {
    static let over = Limits.requestBytes + 1

    func sandbox() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Z"]).status, 0)
        return s
    }

    func testEveryRequestReadFromStdinStopsAtTheRequestLimit() {
        let s = sandbox()
        let line = String(repeating: "a", count: Self.over)
        let body = #"{"operations": [{"operationType": "create", "record": {"recordName": "r", "recordType": "T", "fields": {"t": {"value": ""# + line + #""}}}}]}"#
        let record = #"{"recordName": "r", "recordType": "T", "fields": {"t": {"value": ""# + line + #""}}}"#
        let cases: [([String], String)] = [
            (["--zone", "Z", "record", "get", "-"], line),
            (["--zone", "Z", "record", "delete", "-"], line),
            (["--zone", "Z", "record", "modify"], body),
            (["--zone", "Z", "record", "save", "--stdin"], record),
            (["--zone", "Z", "record", "save", "--type", "T", "--name", "r", "t=@-"], line),
            (["schema", "import", "-"], line),
            (["server-key", "add", "key-1", "--public-key", "-"], line),
        ]
        let before = s.snapshot()
        for (args, input) in cases {
            assertFailure(s.run(args, stdin: input), exit: 8, contains: "on stdin: more than \(Limits.requestBytes) bytes")
        }
        XCTAssertEqual(s.snapshot(), before, "a refused request writes nothing")
    }

    func testARequestOfExactlyTheLimitIsRead() {
        let s = sandbox()
        // Names up to the limit: 2 MB of newlines around one name is no error of size.
        let names = "r1\n" + String(repeating: "\n", count: Limits.requestBytes - 3)
        XCTAssertEqual(s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "r1", "n=1"]).status, 0)
        let r = s.run(["--zone", "Z", "record", "get", "-"], stdin: names)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testAnAssetFromStdinMayExceedTheRequestLimit() {
        let s = sandbox()
        let bytes = Data(repeating: 7, count: Self.over + 1000)
        let r = s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "a1", "file:ASSETID=@-"], stdinData: bytes)
        XCTAssertEqual(r.status, 0, r.stderr)
    }
}
