import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

// What the change-feed tests share: a page's changes as names, and a client's replica fed
// page by page through the API.

/// A page's changes as names, a tombstone as "-name".
func changeNames(_ r: ZoneChangesResult) -> [String] {
    r.changes.map { if case .record(let rec) = $0 { return rec.recordName } else if case .deleted(let n) = $0 { return "-" + n }; return "" }
}

/// A client of a zone feed: the records it holds, and its token.
struct FeedReplica {
    var records: [String: Record] = [:]
    var token: String?
    /// Each page fetched, as `changeNames` gives it.
    var pages: [[String]] = []

    /// Applies a page, as an app applies recordWasChanged / recordWithIDWasDeleted.
    mutating func apply(_ page: ZoneChangesResult) {
        for c in page.changes {
            switch c {
            case .record(let r): records[r.recordName] = r
            case .deleted(let n): records[n] = nil
            }
        }
        pages.append(changeNames(page))
        token = page.syncToken
    }

    /// Fetches and applies pages of `limit` until moreComing is false; `between(i)` runs after
    /// page i. Returns the last page.
    @discardableResult
    mutating func catchUp(_ db: APIClient, zone: String, limit: Int, between: (Int) throws -> Void = { _ in }) throws -> ZoneChangesResult {
        while true {
            let page = try db.zoneChanges(zone: zone, since: token, limit: limit)
            XCTAssertLessThanOrEqual(page.changes.count, limit)
            apply(page)
            try between(pages.count)
            if !page.moreComing { return page }
        }
    }

    /// Every name the pages returned, in order.
    var returned: [String] { pages.flatMap { $0 } }
}
