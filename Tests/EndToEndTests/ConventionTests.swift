import CKTestSupport
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The conventions of issue 12 that need a process of their own: a terminal on stdin, and
/// `account events --follow --since`. (The rest run in-process: CKCLITests/ConventionTests.)
final class ConventionTests: XCTestCase {
    /// On a terminal, a command that reads stdin says what it waits for instead of hanging.
    /// (End to end: in-process, stdin is never a terminal.)
    func testTerminalOnStdinIsAnnounced() throws {
        let s = Sandbox()
        s.signIn()
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw XCTSkip("no pseudo-terminal here") }
        defer { close(master) }
        let p = Process()
        p.executableURL = Sandbox.binary
        p.arguments = ["record", "get", "-"]
        p.environment = s.environment
        p.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        let err = Pipe(), out = Pipe()
        p.standardError = err
        p.standardOutput = out
        try p.run()
        // Wait for the announcement, then type a name and end the input (Ctrl-D).
        var said = Data()
        let deadline = Date().addingTimeInterval(10)
        while !String(decoding: said, as: UTF8.self).contains("\n") && Date() < deadline {
            said.append(err.fileHandleForReading.availableData)
        }
        XCTAssertTrue(String(decoding: said, as: UTF8.self).hasPrefix("ck: reading record names (one per line) from standard input (a terminal); end it with Ctrl-D"),
                      String(decoding: said, as: UTF8.self))
        _ = "nope\n\u{4}".withCString { write(master, $0, strlen($0)) }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 3)
        XCTAssertTrue(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("NOT_FOUND: record 'nope' not found"))
    }

    /// (End to end: its `--follow --since` installs signal handlers, which belongs in a process
    /// of its own, not in the test runner.)
    func testAccountRequireAndEventsSince() {
        let s = Sandbox()
        assertFailure(s.ck("account", "--require", "available"), exit: 5, contains: "the account status is noAccount, not available")
        XCTAssertEqual(s.ck("account", "--require", "noAccount").status, 0)
        assertFailure(s.ck("account", "--require", "happy"), exit: 2, contains: "valid values: available, noAccount")
        s.signIn()
        let ok = s.ck("account", "--require", "available")
        XCTAssertEqual(ok.status, 0)
        XCTAssertEqual(ok.object["status"] as? String, "available")
        XCTAssertEqual(s.ck("account", "signout").status, 0)
        s.signIn("bob@example.com")
        func seqs(_ r: CKResult) -> [Int] { r.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int } }
        XCTAssertEqual(seqs(s.ck("account", "events", "--format", "ndjson")), [1, 2, 3])
        XCTAssertEqual(seqs(s.ck("account", "events", "--since", "1", "--format", "ndjson")), [2, 3])
        // --follow --since: no replay of what was seen.
        let f = s.ck("account", "events", "--follow", "--since", "2", "--timeout", "0.5")
        XCTAssertEqual(f.status, 0, f.stderr)
        XCTAssertEqual(seqs(f), [3])
        assertFailure(s.ck("account", "events", "--since", "-1"), exit: 2, contains: "--since must be an event seq")
    }
}
