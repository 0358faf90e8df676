import CKTestSupport
import Foundation
import XCTest

/// `--all`: every page in one process (issue 13), the same records, in the same order, as
/// following the markers or tokens page by page.
final class PaginationTests: XCTestCase {
    func testQueryAllEqualsEveryPageFollowed() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "L").status, 0)
        let lines = (0..<23).map { "{\"recordName\":\"q\($0)\",\"recordType\":\"Q\",\"zoneID\":{\"zoneName\":\"L\"},\"fields\":{\"n\":{\"value\":\(($0 * 7) % 23)}}}" }
        XCTAssertEqual(s.run(["import"], stdin: lines.joined(separator: "\n") + "\n").status, 0)
        // A query without a filter needs "___recordID" QUERYABLE, as in CloudKit.
        XCTAssertEqual(s.ck("schema", "index", "add", "Q", "___recordID", "QUERYABLE").status, 0)
        let base = ["-q", "--zone", "L", "record", "query", "--type", "Q", "--sort", "n:desc", "--limit", "5"]
        var followed: [String] = []
        var marker: String?
        repeat {
            let page = s.run(base + (marker.map { ["--continue", $0] } ?? []))
            XCTAssertEqual(page.status, 0, page.stderr)
            followed += (page.object["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
            marker = page.object["continuationMarker"] as? String
        } while marker != nil
        XCTAssertEqual(followed.count, 23)
        let all = s.run(base + ["--all", "--format", "ndjson"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(names(all), followed)
        // As JSON: one records/query body, no marker.
        let doc = s.run(base + ["--all"])
        XCTAssertEqual((doc.object["records"] as? [[String: Any]])?.count, 23)
        XCTAssertNil(doc.object["continuationMarker"])
        // With a filter: only what matches, still every page.
        let some = s.run(["-q", "--zone", "L", "record", "query", "--type", "Q", "--filter", "n >= 10", "--limit", "2", "--all", "--format", "ndjson"])
        XCTAssertEqual(names(some).count, 13)
    }
}

extension PaginationTests {
    func testZoneAndDatabaseChangesAllEqualEveryPageFollowed() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "A", "B").status, 0)
        for i in 0..<7 { XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--type", "T", "--name", "a\(i)", "n=\(i)").status, 0) }
        for i in 0..<3 { XCTAssertEqual(s.ck("--zone", "B", "record", "save", "--type", "T", "--name", "b\(i)", "n=\(i)").status, 0) }
        // a0 changes again after the first page: in one body it appears once, in its last state.
        XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--name", "a0", "--force", "n=100").status, 0)
        XCTAssertEqual(s.ck("--zone", "A", "record", "delete", "a1").status, 0)

        // Following the tokens by hand, two per page.
        var followed: [String] = []
        var token: String?
        var more = true
        while more {
            let page = s.run(["--zone", "A", "zone", "changes", "--limit", "2", "--no-save"] + (token.map { ["--since", $0] } ?? []))
            XCTAssertEqual(page.status, 0, page.stderr)
            followed += (page.zoneChanges["records"] as? [[String: Any]] ?? []).map { "\($0["recordName"]!)" }
            token = page.zoneChanges["syncToken"] as? String
            more = page.zoneChanges["moreComing"] as? Bool ?? false
        }
        // Each record once, where it last changed: a1's deletion is reported from the start
        // because this device made it (reference §5.4).
        XCTAssertEqual(followed, ["a2", "a3", "a4", "a5", "a6", "a0", "a1"])
        // --all as a stream: the same records in the same order, each page closed by its own
        // {zoneID, syncToken, moreComing} line, which a script can keep as it goes.
        let stream = s.ck("--zone", "A", "--zone", "B", "zone", "changes", "--limit", "2", "--all", "--format", "ndjson")
        XCTAssertEqual(stream.status, 0, stream.stderr)
        let lines = stream.stdout.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
        let closers = lines.enumerated().filter { $0.element["syncToken"] != nil }
        let zoneOf: ([String: Any]) -> String? = { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        XCTAssertEqual(closers.map { zoneOf($0.element) }, ["A", "A", "A", "A", "B", "B"], "a line per page of 2")
        XCTAssertEqual(closers.map { $0.element["moreComing"] as? Bool }, [true, true, true, false, true, false])
        let lastOfA = closers[3].offset
        XCTAssertEqual(lines[..<lastOfA].filter { $0["syncToken"] == nil }.map { "\($0["recordName"]!)" }, followed)
        XCTAssertEqual(lines[lastOfA]["syncToken"] as? String, token, "the last page's token")
        XCTAssertEqual(lines[(lastOfA + 1)...].filter { $0["syncToken"] == nil }.map { "\($0["recordName"]!)" }, ["b0", "b1", "b2"])
        // A page's token, kept, continues from that page.
        let rest = s.run(["--zone", "A", "zone", "changes", "--limit", "2", "--no-save", "--since", closers[1].element["syncToken"] as? String ?? ""])
        XCTAssertEqual((rest.zoneChanges["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String }, ["a6", "a0"])
        // The bookmarks moved to the end: nothing more to fetch.
        XCTAssertEqual((s.ck("--zone", "A", "zone", "changes").zoneChanges["records"] as? [Any])?.count, 0)

        // --all as JSON: one body, each record once, in its last state.
        let doc = s.ck("--zone", "A", "zone", "changes", "--from-start", "--limit", "2", "--all", "--no-save")
        let records = doc.zoneChanges["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(records.map { "\($0["recordName"]!)" }).count, records.count)
        XCTAssertEqual(records.count, 7)
        let a0 = records.first { $0["recordName"] as? String == "a0" }
        XCTAssertEqual(((a0?["fields"] as? [String: Any])?["n"] as? [String: Any])?["value"] as? Int, 100)
        XCTAssertEqual(doc.zoneChanges["moreComing"] as? Bool, false)

        // database changes --all: every zone once, in the order of its latest change (A's last
        // two records changed after B's), the final token.
        let db = s.ck("database", "changes", "--limit", "1", "--all")
        XCTAssertEqual(db.status, 0, db.stderr)
        XCTAssertEqual((db.object["zones"] as? [[String: Any]])?.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }, ["B", "A"])
        XCTAssertEqual(db.object["moreComing"] as? Bool, false)
        XCTAssertEqual((s.ck("database", "changes").object["zones"] as? [Any])?.count, 0, "the bookmark is at the end")
    }
}
