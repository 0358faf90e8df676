import CKTestSupport
import XCTest

/// SPEC §2 through the built binary: formats, error formats, determinism, and one command per
/// exit code.
final class OutputContractTests: XCTestCase {
    func testFormatsShowTheSameRecords() {
        let s = Sandbox()
        s.signIn()
        for n in ["a", "b"] { s.ck("record", "save", "--type", "T", "--name", n, "v=\(n)") }
        let json = s.ck("record", "list")
        XCTAssertTrue(json.stdout.hasPrefix("{\n  \"records\": [\n"), json.stdout)
        XCTAssertEqual((json.object["records"] as? [Any])?.count, 2)
        let nd = s.ck("record", "list", "--format", "ndjson")
        let lines = nd.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("{\"created\":") }, "compact, sorted keys: \(lines)")
        let table = s.run(["record", "list"], env: ["CK_FORMAT": "table"])
        XCTAssertTrue(table.stdout.hasPrefix("recordName"), table.stdout)
        XCTAssertTrue(table.stdout.contains(" a ") || table.stdout.contains("a  "), table.stdout)
        XCTAssertEqual(s.ck("record", "list").stdout, json.stdout, "same state, same bytes")
        assertFailure(s.ck("record", "list", "--format", "xml"), exit: 2, contains: "invalid value 'xml'")
    }

    func testErrorFormatJSONIsTheWebServicesEnvelope() throws {
        let s = Sandbox()
        s.signIn()
        let r = s.ck("record", "get", "missing", "--error-format", "json")
        XCTAssertEqual(r.status, 3)
        XCTAssertEqual(r.stdout, "")
        let env = try JSONSerialization.jsonObject(with: Data(r.stderr.utf8)) as? [String: Any] ?? [:]
        XCTAssertEqual(env["serverErrorCode"] as? String, "NOT_FOUND")
        XCTAssertEqual(env["recordName"] as? String, "missing")
        XCTAssertEqual(env["ckErrorCode"] as? Int, 11)
        XCTAssertNotNil(env["uuid"] as? String)
        XCTAssertNotNil(env["reason"] as? String)
        let usage = s.run(["record", "get"], env: ["CK_ERROR_FORMAT": "json"])
        XCTAssertEqual(usage.status, 2)
        XCTAssertTrue(usage.stderr.contains("\"serverErrorCode\":\"USAGE\""), usage.stderr)
    }

    func testEachExitCode() {
        let s = Sandbox()
        XCTAssertEqual(s.ck("account").status, 0)
        assertFailure(s.ck("record", "get"), exit: 2, contains: "missing record name")
        assertFailure(s.ck("record", "list"), exit: 5, contains: "AUTHENTICATION_REQUIRED")
        s.signIn()
        assertFailure(s.ck("record", "get", "nope"), exit: 3, contains: "NOT_FOUND")
        s.ck("record", "save", "--type", "T", "--name", "x")
        assertFailure(s.ck("record", "save", "--type", "T", "--name", "x"), exit: 4, contains: "EXISTS")
        assertFailure(s.ck("record", "save", "--type", "T", "--name", String(repeating: "x", count: 300)), exit: 6, contains: "BAD_REQUEST")
        s.ck("zone", "create", "Z")
        let tok = s.ck("--zone", "Z", "zone", "changes").zoneChanges["syncToken"] as? String ?? ""
        s.ck("--zone", "Z", "token", "expire")
        assertFailure(s.ck("--zone", "Z", "zone", "changes", "--since", tok), exit: 7, contains: "CHANGE_TOKEN_EXPIRED")
        let big = "{\"operations\":[" + (0..<401).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"r\($0)\",\"recordType\":\"T\"}}" }.joined(separator: ",") + "]}"
        assertFailure(s.run(["record", "modify"], stdin: big), exit: 8, contains: "LIMIT_EXCEEDED")
        let r = s.ck("record", "get", "x", "nope")
        XCTAssertEqual(r.status, 9)
        XCTAssertTrue(r.stderr.contains("PARTIAL_FAILURE"))
        // 1: a problem fsck cannot repair (a damaged file it has no copy of).
        let device = s.dataDir.appendingPathComponent("device.json")
        let saved = try? Data(contentsOf: device)
        try? Data("{broken".utf8).write(to: device)
        XCTAssertEqual(s.ck("fsck").status, 1)
        try? saved?.write(to: device)
        XCTAssertEqual(s.ck("fsck").status, 0)
    }

    func testHelp() {
        let s = Sandbox()
        let h = s.ck("help")
        XCTAssertEqual(h.status, 0)
        XCTAssertTrue(h.stdout.contains("record save"))
        XCTAssertTrue(h.stdout.contains("Exit codes:"))
        let one = s.ck("record", "save", "-h")
        XCTAssertEqual(one.status, 0)
        XCTAssertTrue(one.stdout.hasPrefix("usage: ck record save"))
        assertFailure(s.ck("frobnicate"), exit: 2, contains: "unknown command")
    }
}
