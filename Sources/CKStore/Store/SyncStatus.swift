import CKModel

/// How far a device's saved change tokens (its bookmarks) are behind the history, for
/// `ck status`: the number of changes a `zone changes` or `database changes` would return
/// next, computed from sequence numbers alone (no history is read).
package struct BookmarkLag: Equatable, Sendable {
    package enum State: String, Sendable {
        /// No token saved: the next fetch starts from the beginning.
        case none
        /// Nothing to fetch: the next fetch returns no change (`changes` 0).
        case upToDate
        /// Behind by `changes` (at least 1).
        case behind
        /// The token is expired (history compacted, zone made again): refetch from scratch.
        case expired
        /// The saved token does not belong here (a damaged or foreign file).
        case invalid
    }
    package var state: State
    /// Changes after the bookmark (every change when there is none); nil when expired or invalid.
    package var changes: Int64?
    package var reason: String?

    /// A bookmark `changes` behind: up to date when there are none.
    package static func behind(_ changes: Int64) -> BookmarkLag {
        BookmarkLag(state: changes > 0 ? .behind : .upToDate, changes: changes)
    }
}

extension Bookmarks {
    /// The device's bookmark for a custom zone, against the zone's history.
    package func lag(zone name: String) throws -> BookmarkLag {
        let z = try db.changes.feedZone(name)
        let head = try z.history.head()
        guard let token = try self.token(zone: name) else { return BookmarkLag(state: .none, changes: head) }
        return lag(head: head) { try db.tokens.checkZone(token, zone: z, head: head).seq }
    }

    /// The device's bookmark for the database feed (which zones changed).
    package func databaseLag() throws -> BookmarkLag {
        let head = try db.databaseHistory.head()
        guard let token = try self.token(zone: nil) else { return BookmarkLag(state: .none, changes: head) }
        return lag(head: head) { try db.tokens.checkDatabase(token, head: head) }
    }

    /// The lag behind `head` of a token `check` validates (the feed's own check).
    private func lag(head: Int64, _ check: () throws -> Int64) -> BookmarkLag {
        do { return .behind(head - (try check())) } catch let e as CloudKitError {
            return BookmarkLag(state: e.code == .changeTokenExpired ? .expired : .invalid, reason: e.reason)
        } catch {
            return BookmarkLag(state: .invalid, reason: "\(error)")
        }
    }
}
