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

    func testHelpListsEveryCommand() {
        let r = CLISandbox().run("help")
        XCTAssertEqual(r.status, 0)
        for c in CommandTable.standard.commands { XCTAssertTrue(r.stdout.contains(c.name), c.name) }
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
