import CKCore
import CKModel
import Foundation
import XCTest
@testable import CKCLI

/// The three pages that list endpoints by hand agree with `Endpoint` and the command table:
/// every endpoint is listed where it must be, none is listed that does not exist, and a
/// command is listed with the endpoint its row names.
final class EndpointDocTablesTests: XCTestCase {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs")

    let table = CommandTable.standard

    /// Docs/faults.md's `--op` table: every endpoint, each with exactly the commands that
    /// stand for it ("no command" for the others).
    func testFaultsListsEveryOperationWithItsCommands() throws {
        let rows = try Self.rows(of: "faults.md", header: "| `--op` | Commands |")
        var listed: [Endpoint] = []
        for row in rows {
            let endpoints = try endpoints(in: row[0], "faults.md")
            XCTAssertEqual(endpoints.count, Self.codeSpans(row[0]).count, "faults.md: only endpoints in '\(row[0])'")
            listed += endpoints
            for e in endpoints {
                XCTAssertEqual(commands(in: row[1]), commands(standingFor: e), "faults.md: the commands of \(e.path)")
            }
        }
        XCTAssertEqual(Set(Endpoint.allCases).subtracting(listed).map(\.path), [], "faults.md: endpoints missing")
        XCTAssertEqual(listed.count, Set(listed).count, "faults.md: each endpoint once")
    }

    /// Docs/serve.md's routes: every endpoint with a Web Services path, and how it is sent.
    func testServeListsEveryRouteAndItsMethod() throws {
        let rows = try Self.rows(of: "serve.md", header: "| endpoint | method |")
        var listed: [Endpoint] = []
        for row in rows {
            for e in try endpoints(in: row[0], "serve.md") {
                listed.append(e)
                XCTAssertEqual(row[1].contains("GET"), e.isGET, "serve.md: \(e.path) is sent as \(e.isGET ? "GET" : "POST")")
                if !e.isGET { XCTAssertTrue(row[1].contains("POST"), "serve.md: \(e.path) is a POST") }
            }
        }
        XCTAssertEqual(Set(Endpoint.allCases.filter { $0.module != .native }).subtracting(listed).map(\.path), [], "serve.md: routes missing")
        XCTAssertEqual(listed.filter { $0.module == .native }.map(\.path), [], "serve.md: native operations have no route")
        XCTAssertEqual(listed.count, Set(listed).count, "serve.md: each route once")
    }

    /// Docs/wire.md's commands and endpoints: every command, every endpoint with a Web
    /// Services path, and each command with the endpoint its row names.
    func testWireMapsEveryCommandToItsEndpoint() throws {
        let rows = try Self.rows(of: "wire.md", header: "| Command | Stands for |")
        var named: Set<String> = []
        var listed: Set<Endpoint> = []
        for row in rows {
            let commands = commands(in: row[0])
            let endpoints = Set(try endpoints(in: row[1], "wire.md"))
            named.formUnion(commands)
            listed.formUnion(endpoints)
            if commands.isEmpty { continue }
            // A row of commands names no endpoint that none of them stands for.
            let theirs = Set(commands.compactMap { table.command($0.split(separator: " ").map(String.init))?.endpoint })
            XCTAssertEqual(endpoints.subtracting(theirs), [], "wire.md: \(commands.sorted()) stand for none of these")
            for c in commands {
                if let e = table.command(c.split(separator: " ").map(String.init))?.endpoint, !endpoints.contains(e) {
                    // Another row names the command with its endpoint (`record get … --at REF`).
                    XCTAssertTrue(rows.contains { self.commands(in: $0[0]).contains(c) && $0[1].contains("`\(e.path)`") },
                                  "wire.md: '\(c)' stands for \(e.path)")
                }
            }
        }
        XCTAssertEqual(Set(table.commands.map(\.name)).subtracting(named), [], "wire.md: commands missing")
        XCTAssertEqual(Set(Endpoint.allCases.filter { $0.module != .native }).subtracting(listed).map(\.path), [], "wire.md: endpoints missing")
    }

    // MARK: reading the tables

    /// The rows of the table whose header starts with `header`, as cells (`\|` is a `|` in a
    /// cell, as GitHub reads it).
    static func rows(of page: String, header: String) throws -> [[String]] {
        let lines = try String(contentsOf: docs.appendingPathComponent(page), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(header) }) else { throw CocoaError(.fileReadCorruptFile, userInfo: ["table": header]) }
        return lines[(start + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            line.replacingOccurrences(of: "\\|", with: "\u{0}").split(separator: "|", omittingEmptySubsequences: false)
                .dropFirst().dropLast().map { $0.replacingOccurrences(of: "\u{0}", with: "|").trimmingCharacters(in: .whitespaces) }
        }
    }

    static func codeSpans(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The endpoints a cell names (`records/modify`); a name shaped like one that is not one
    /// fails the test.
    func endpoints(in cell: String, _ page: String) throws -> [Endpoint] {
        Self.codeSpans(cell).filter { $0.range(of: #"^[a-z]+(/[a-z]+)+$"#, options: .regularExpression) != nil }.compactMap { path in
            let e = Endpoint(path: path)
            XCTAssertNotNil(e, "\(page): '\(path)' is no endpoint")
            return e
        }
    }

    /// The commands a cell names: `record get NAME…`, `fault add\|list\|clear`, `role …` (every
    /// command of the group).
    func commands(in cell: String) -> Set<String> {
        var found: Set<String> = []
        for span in Self.codeSpans(cell) {
            var lines: [[String]] = [[]]
            for word in span.split(separator: " ") {
                lines = lines.flatMap { l in word.split(separator: "|").map { l + [String($0)] } }
            }
            for words in lines {
                if let c = table.match(words) {
                    found.insert(c.name)
                } else if words.count == 2, words[1] == "…", table.groups.contains(words[0]) {
                    found.formUnion(table.children(of: [words[0]]).map(\.name))
                }
            }
        }
        return found
    }

    func commands(standingFor e: Endpoint) -> Set<String> {
        Set(table.commands.filter { $0.endpoint == e }.map(\.name))
    }
}
