import CKTestSupport
import Foundation
import XCTest

/// Options of `ck log` and `ck diff` no test reached before (issue 30, item 11): the limit of
/// a log of every zone, and `diff --name-only`, which names the records and prints no field.
final class HistoryOutputOptionsTests: XCTestCase {
    /// Zones A and B, three records each, then r1 of A changed: 7 changes in all.
    private func twoZones() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        for z in ["A", "B"] {
            XCTAssertEqual(s.ck("zone", "create", z).status, 0)
            for i in 1...3 { XCTAssertEqual(s.ck("--zone", z, "record", "save", "--type", "T", "--name", "\(z.lowercased())\(i)", "t=\(i)").status, 0) }
        }
        XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--name", "a1", "--force", "t=9").status, 0)
        return s
    }

    private func changes(_ r: CKResult) -> [[String: Any]] { r.object["changes"] as? [[String: Any]] ?? [] }

    func testALogOfEveryZonePrintsAtMostItsLimit() {
        let s = twoZones()
        let all = s.ck("log", "--all-zones")
        XCTAssertEqual(all.status, 0, all.stderr)
        let every = changes(all)
        XCTAssertEqual(every.count, 7)
        for n in [1, 2, 3, 6, 7, 50] {
            let r = s.ck("log", "--all-zones", "--limit", "\(n)")
            XCTAssertEqual(r.status, 0, r.stderr)
            let got = changes(r)
            XCTAssertEqual(got.count, min(n, 7), "--limit \(n)")
            // The newest n of the whole log, in its order.
            XCTAssertEqual(got.map { "\($0["seq"] ?? "")\(($0["zoneID"] as? [String: Any])?["zoneName"] ?? "")" },
                           every.prefix(n).map { "\($0["seq"] ?? "")\(($0["zoneID"] as? [String: Any])?["zoneName"] ?? "")" })
            let nd = s.ck("log", "--all-zones", "--limit", "\(n)", "--format", "ndjson")
            XCTAssertEqual(nd.stdout.split(separator: "\n").count, min(n, 7), "ndjson, --limit \(n)")
        }
        XCTAssertEqual(Set(every.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }), ["A", "B"])
    }

    func testDiffNameOnlyNamesTheRecordsAndPrintsNoField() {
        let s = twoZones()
        let full = s.ck("--zone", "A", "diff", "A@1")
        XCTAssertEqual(full.status, 0, full.stderr)
        XCTAssertTrue(changes(full).allSatisfy { $0["fields"] != nil }, full.stdout)
        let names = s.ck("--zone", "A", "diff", "A@1", "--name-only")
        XCTAssertEqual(names.status, 0, names.stderr)
        let items = changes(names)
        XCTAssertEqual(items.compactMap { $0["recordName"] as? String }, ["a1", "a2", "a3"])
        XCTAssertEqual(items.compactMap { $0["status"] as? String }, ["changed", "added", "added"])
        XCTAssertTrue(items.allSatisfy { $0["fields"] == nil }, names.stdout)
        XCTAssertFalse(names.stdout.contains("\"new\""), names.stdout)
        XCTAssertFalse(names.stdout.contains("INT64"), "no field value or type: \(names.stdout)")
        // As a table, one record a line.
        let table = s.ck("--zone", "A", "diff", "A@1", "--name-only", "--format", "ndjson")
        XCTAssertEqual(table.stdout.split(separator: "\n").count, 3)
        XCTAssertFalse(table.stdout.contains("fields"))
    }
}
