import XCTest
@testable import CKCLI

/// A row of the command table makes its command's spec only when something asks for it: a
/// process runs one command, and making every spec (their options and help texts) cost each
/// `ck` 0.15 ms at start.
final class CommandTableTests: XCTestCase {
    func testARowMakesItsSpecOnlyWhenAsked() {
        nonisolated(unsafe) var made = 0
        func spec() -> CommandSpec {
            made += 1
            return CommandSpec(synopsis: "ARG", summary: "a command") { _ in 0 }
        }
        let table = CommandTable(commands: [Command(["one"], nil, spec()), Command(["two"], nil, spec())])
        XCTAssertEqual(made, 0, "the table made specs before any was asked for")
        let two = table.match(["two", "extra"])
        XCTAssertEqual(two?.path, ["two"])
        XCTAssertEqual(made, 0, "finding a command made specs")
        XCTAssertEqual(two?.synopsis, "ARG")
        XCTAssertEqual(two?.summary, "a command")
        XCTAssertEqual(made, 2, "each field asked for reads the spec")
    }

    func testEveryStandardRowStillCarriesItsSpec() {
        for c in CommandTable.standard.commands {
            XCTAssertFalse(c.summary.isEmpty, "ck \(c.name) has no summary")
        }
    }
}
