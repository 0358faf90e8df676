import CKModel

/// A change feed followed page after page in one call, as a client follows moreComing (`--all`,
/// like `gh --paginate`): each page as it comes, to stream it with its own token, or every page
/// in one result. Paging and de-duplication live here, in the core, with the feeds.
///
/// Within one fetch each record (zone) comes once, on the page of its latest change; it comes
/// again only if it changed after the page that brought it (a concurrent write). One result
/// for every page keeps such a record once, in its latest state, where it last changed —
/// applying the list in order leaves the replica applying the pages would.
extension ChangeFeed {
    /// Fetches a zone's pages from `since` until one says moreComing is false, handing each to
    /// `page`, which returns false to stop early (its reader went away); returns the last page.
    @discardableResult
    package func followZone(_ name: String, since: String?, limit: Int = Limits.resultsPerPage,
                          _ page: (ZoneChangesResult) throws -> Bool) throws -> ZoneChangesResult {
        var last = try zone(name, since: since, limit: limit)
        while try page(last) && last.moreComing { last = try zone(name, since: last.syncToken, limit: limit) }
        return last
    }

    /// Every page of a zone's changes from `since` as one result: each record once (see above),
    /// with the last page's token and moreComing (true only when `more` stopped it early).
    package func allOfZone(_ name: String, since: String?, limit: Int = Limits.resultsPerPage,
                           while more: () -> Bool = { true }) throws -> ZoneChangesResult {
        var changes: [ZoneChangesResult.RecordChange] = []
        var last = try followZone(name, since: since, limit: limit) { changes += $0.changes; return more() }
        last.changes = ChangeFeed.lastOfEach(changes) { c -> NameKey in
            switch c {
            case .record(let r): return NameKey(r.recordName)
            case .deleted(let n): return NameKey(n)
            }
        }
        return last
    }

    /// The database's pages from `since` until one says moreComing is false (see
    /// `followZone`); returns the last page.
    @discardableResult
    package func followDatabase(since: String?, limit: Int = Limits.resultsPerPage,
                              _ page: (DatabaseChangesResult) throws -> Bool) throws -> DatabaseChangesResult {
        var last = try database(since: since, limit: limit)
        while try page(last) && last.moreComing { last = try database(since: last.syncToken, limit: limit) }
        return last
    }

    /// Every page of the database's changes from `since` as one result: each zone once, as
    /// it last changed.
    package func allOfDatabase(since: String?, limit: Int = Limits.resultsPerPage, while more: () -> Bool = { true }) throws -> DatabaseChangesResult {
        var zones: [DatabaseChangesResult.Zone] = []
        var last = try followDatabase(since: since, limit: limit) { zones += $0.zones; return more() }
        // Shared zones of two owners may share a name.
        last.zones = ChangeFeed.lastOfEach(zones) { [$0.zoneID.ownerRecordName, $0.zoneID.zoneName].map(NameKey.init) }
        return last
    }

    /// Each key's last item, in the order of those last items.
    static func lastOfEach<T, K: Hashable>(_ items: [T], key: (T) -> K) -> [T] {
        var seen = Set<K>()
        return items.reversed().filter { seen.insert(key($0)).inserted }.reversed()
    }
}
