import CKCore
import CKJSON
import Foundation
import XCTest

/// What one `ck` command did: its stdout, stderr and exit status — from the built binary
/// (`Sandbox`) or from `CLI.run` in this process (`CLISandbox`), compared the same way.
public struct CKResult {
    public let stdout: String
    public let stderr: String
    public let status: Int32

    public init(stdout: String, stderr: String, status: Int32) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
    }

    /// stdout parsed as JSON (fails the test when it is not).
    public func json(file: StaticString = #filePath, line: UInt = #line) -> Any? {
        guard let d = stdout.data(using: .utf8), let v = try? JSONSerialization.jsonObject(with: d, options: [.fragmentsAllowed]) else {
            XCTFail("stdout is not JSON: \(stdout)", file: file, line: line)
            return nil
        }
        return v
    }

    public var object: [String: Any] { (json() as? [String: Any]) ?? [:] }

    /// The first record of a records/lookup or records/modify response (`{records: [...]}`).
    public var record: [String: Any] { (object["records"] as? [[String: Any]])?.first ?? [:] }

    /// The first zone entry of a changes/zone response (`{zones: [{zoneID, records, …}]}`).
    public var zoneChanges: [String: Any] { (object["zones"] as? [[String: Any]])?.first ?? [:] }
}

/// Assertion helpers for a failed command: nothing on stdout, one line on stderr, the exit code.
public func assertFailure(_ r: CKResult, exit: Int32, contains: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(r.status, exit, "stderr: \(r.stderr)", file: file, line: line)
    XCTAssertEqual(r.stdout, "", "stdout must be empty on failure", file: file, line: line)
    if exit != 2 {
        XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "one line on stderr: \(r.stderr)", file: file, line: line)
    }
    if let c = contains { XCTAssertTrue(r.stderr.contains(c), "stderr '\(r.stderr)' lacks '\(c)'", file: file, line: line) }
}


extension CKResult {
    /// stdout as the core's JSON value (nil when it is not JSON), for tests that compare values.
    public var parsed: JSONValue? { try? JSONParser.parse(Array(stdout.utf8)) }
}
