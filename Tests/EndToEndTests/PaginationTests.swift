import Foundation
import XCTest

/// `--all`: every page in one process (issue 13), the same records, in the same order, as
/// following the markers or tokens page by page.
final class PaginationTests: XCTestCase {
    private func names(_ r: CKResult) -> [String] {
        r.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["recordName"] as? String }
    }

    func testQueryAllEqualsEveryPageFollowed() {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "L").status, 0)
        let lines = (0..<23).map { "{\"recordName\":\"q\($0)\",\"recordType\":\"Q\",\"zoneID\":{\"zoneName\":\"L\"},\"fields\":{\"n\":{\"value\":\(($0 * 7) % 23)}}}" }
        XCTAssertEqual(s.run(["import"], stdin: lines.joined(separator: "\n") + "\n").status, 0)
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
