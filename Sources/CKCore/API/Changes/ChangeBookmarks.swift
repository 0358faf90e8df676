import CKModel
import CKStore

/// ck's own: each device's saved change tokens (its bookmarks), what an app keeps in
/// UserDefaults. `zone changes` and `database changes` start from them when no token is given
/// and move them once their output is out (output first, then state: the front end decides
/// when).
public struct BookmarkUpdate: Sendable {
    /// nil: the database's bookmark.
    public var zoneName: String?
    public var token: String

    public init(zoneName: String?, token: String) {
        self.zoneName = zoneName
        self.token = token
    }
}

extension CloudKitAPI {
    public func saveBookmarks(_ updates: [BookmarkUpdate], as caller: Caller) throws {
        let ctx = try preflight(nil, caller)
        for u in updates { try ctx.db.bookmarks.save(zone: u.zoneName, token: u.token) }
    }
}
