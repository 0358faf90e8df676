import CKTestSupport
import Foundation
import XCTest

/// What a new user hit (issue 30, item 10): `ck status` calls a bookmark with nothing to fetch
/// up to date; `log --since` a time before a zone's history shows all of it (as git does);
/// `--limit` above a page's 200 reads as 200 alike for queries and change feeds (CloudKit's
/// resultsLimit is a ceiling: the server may use a lower one), with the rest a marker or a
/// moreComing away.
final class StatusLogAndLimitTests: XCTestCase {
    private func zoneA(_ s: CLISandbox, records: Int = 2) {
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "A").status, 0)
        for i in 0..<records { XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--type", "T", "--name", "r\(i)", "v=\(i)").status, 0) }
    }

    private func zoneEntry(_ r: CKResult, _ name: String) -> [String: Any]? {
        ((r.object["zones"] as? [[String: Any]]) ?? []).first { $0["zoneName"] as? String == name }
    }

    func testABookmarkWithNothingToFetchIsUpToDateNotBehind() {
        let s = CLISandbox()
        zoneA(s)
        XCTAssertEqual(s.ck("--zone", "A", "zone", "changes").status, 0)
        XCTAssertEqual(s.ck("database", "changes").status, 0)
        let st = s.ck("status")
        XCTAssertEqual(st.status, 0, st.stderr)
        XCTAssertEqual(zoneEntry(st, "A")?["bookmark"] as? String, "upToDate", st.stdout)
        XCTAssertEqual(zoneEntry(st, "A")?["behind"] as? Int, 0)
        XCTAssertEqual((st.object["databaseChanges"] as? [String: Any])?["bookmark"] as? String, "upToDate", st.stdout)
        // One change later, it is behind by one.
        XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--name", "r0", "--force", "v=9").status, 0)
        let later = s.ck("status")
        XCTAssertEqual(zoneEntry(later, "A")?["bookmark"] as? String, "behind")
        XCTAssertEqual(zoneEntry(later, "A")?["behind"] as? Int, 1)
    }

    func testLogSinceATimeBeforeTheZoneShowsAllOfItAndUntilShowsNothing() {
        let s = CLISandbox()
        zoneA(s, records: 3)
        let all = s.ck("--zone", "A", "log")
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual((all.object["changes"] as? [Any])?.count, 3)
        for since in ["2h ago", "1 week ago", "2000-01-01"] {
            let r = s.ck("--zone", "A", "log", "--since", since)
            XCTAssertEqual(r.status, 0, "\(since): \(r.stderr)")
            XCTAssertEqual(r.stdout, all.stdout, "--since \(since): the whole log, as git log --since does")
        }
        let until = s.ck("--zone", "A", "log", "--until", "2h ago")
        XCTAssertEqual(until.status, 0, until.stderr)
        XCTAssertEqual((until.object["changes"] as? [Any])?.count, 0, "nothing happened before then")
        // A zone with no change yet: an empty log either way.
        XCTAssertEqual(s.ck("zone", "create", "Empty").status, 0)
        let empty = s.ck("--zone", "Empty", "log", "--since", "2h ago")
        XCTAssertEqual(empty.status, 0, empty.stderr)
        XCTAssertEqual((empty.object["changes"] as? [Any])?.count, 0)
    }

    func testALimitAbove200IsAPageOf200ForQueriesAndChangeFeedsAlike() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "A").status, 0)
        let lines = (0..<230).map { #"{"recordName":"q\#($0)","recordType":"Q","fields":{"n":{"value":\#($0)}}}"# }
        XCTAssertEqual(s.run(["--zone", "A", "import"], stdin: lines.joined(separator: "\n") + "\n").status, 0)
        // A query without a filter needs "___recordID" QUERYABLE, as in CloudKit.
        XCTAssertEqual(s.ck("schema", "index", "add", "Q", "___recordID", "QUERYABLE").status, 0)
        for limit in ["201", "500", "1000"] {
            let q = s.ck("--zone", "A", "record", "query", "--type", "Q", "--limit", limit)
            XCTAssertEqual(q.status, 0, "query --limit \(limit): \(q.stderr)")
            XCTAssertEqual((q.object["records"] as? [Any])?.count, 200)
            XCTAssertNotNil(q.object["continuationMarker"], "the rest is a marker away")
            let z = s.ck("--zone", "A", "zone", "changes", "--from-start", "--no-save", "--limit", limit)
            XCTAssertEqual(z.status, 0, "zone changes --limit \(limit): \(z.stderr)")
            XCTAssertEqual((z.zoneChanges["records"] as? [Any])?.count, 200)
            XCTAssertEqual(z.zoneChanges["moreComing"] as? Bool, true)
            let d = s.ck("database", "changes", "--from-start", "--no-save", "--limit", limit)
            XCTAssertEqual(d.status, 0, "database changes --limit \(limit): \(d.stderr)")
        }
        // What is no positive count stays a usage error, for each.
        for bad in ["0", "-1", "x", "99999999999999999999999"] {
            XCTAssertEqual(s.ck("--zone", "A", "record", "query", "--type", "Q", "--limit", bad).status, 2, bad)
            XCTAssertEqual(s.ck("--zone", "A", "zone", "changes", "--no-save", "--limit", bad).status, 2, bad)
        }
        // Through the Web Services body, the same ceiling.
        let body = s.run(["--zone", "A", "record", "query"], stdin: #"{"query":{"recordType":"Q"},"resultsLimit":1000}"#)
        XCTAssertEqual(body.status, 0, body.stderr)
        XCTAssertEqual((body.object["records"] as? [Any])?.count, 200)
    }
}
