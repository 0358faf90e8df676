import CKTestSupport
import XCTest
@testable import CKCLI

final class HelpTests: XCTestCase {
    /// Every command in the table answers --help and -h on stdout with exit 0.
    func testEveryCommandHasHelp() {
        let s = CLISandbox()
        for c in CommandTable.standard.commands {
            for flag in ["--help", "-h"] {
                let r = s.run(c.path + [flag])
                XCTAssertEqual(r.status, 0, "\(c.name) \(flag)")
                XCTAssertTrue(r.stdout.hasPrefix("usage: ck \(c.name)") || c.name == "help", "\(c.name): \(r.stdout.prefix(80))")
                XCTAssertEqual(r.stderr, "")
            }
        }
    }

    /// `ck help --all` names every command whole; the one-screen overview names every word of
    /// every command under its topic (`record save|get|…`).
    func testHelpListsEveryCommand() {
        let all = CLISandbox().run("help", "--all")
        XCTAssertEqual(all.status, 0)
        for c in CommandTable.standard.commands { XCTAssertTrue(all.stdout.contains("  " + c.name + " "), c.name) }
        let overview = CLISandbox().run("help")
        XCTAssertEqual(overview.status, 0)
        let lines = overview.stdout.split(separator: "\n").map(String.init)
        for c in CommandTable.standard.commands {
            // The topic line that starts the command's group lists its subcommand.
            guard let row = lines.firstIndex(where: { $0.contains(" " + c.path[0] + " ") || $0.contains(" " + c.path[0] + ",") || $0.hasSuffix(" " + c.path[0]) }) else {
                XCTFail("\(c.path[0]) not in ck help"); continue
            }
            let text = lines[row...].prefix(2).joined(separator: " ")
            if c.path.count > 1 { XCTAssertTrue(text.contains(c.path[1]), "\(c.name) not in ck help") }
        }
    }

    func testUnknownCommandAndOptionAreUsageErrors() {
        let s = CLISandbox()
        var r = s.run("frobnicate")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.hasPrefix("ck: error: unknown command 'frobnicate'"), r.stderr)
        r = s.run("record", "get", "x", "--bogus")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("unknown option '--bogus'"))
        XCTAssertTrue(r.stderr.contains("usage: ck record get"))
        XCTAssertTrue(r.stderr.contains("See 'ck record get --help'."))
        XCTAssertEqual(r.stdout, "")
        r = s.run("record")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("needs a subcommand"))
    }
}
