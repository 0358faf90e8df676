import CKCrypto
import CKJSON
import CKModel

/// `changes/database` in a participant's shared database. Its token (`ck1s.…`, signed like
/// every token) holds, for each zone shared with the caller, the point of the owner's zone
/// history the caller has seen; a zone is reported changed when something shared with the
/// caller changed after that point, deleted when it is no longer shared with them. Pages of
/// at most `limit` zones: the token then advances only the zones reported, so the rest come
/// on the next page (`moreComing`).
extension SharedDatabase {
    private static let sharedTokenPrefix = "ck1s."

    /// A zone's place in the shared database's token: its incarnation and the seq seen.
    typealias SharedZonePosition = (incarnation: String, seq: Int64)

    private func sharedToken(_ zones: [String: SharedZonePosition], secret: [UInt8]) -> String {
        let list: [JSONValue] = zones.keys.sorted().map { k in [.string(k), .string(zones[k]!.incarnation), .int(zones[k]!.seq)] }
        let payload: JSONValue = ["s": .string(db.tokens.databaseScopeKey), "z": .array(list)]
        let body = Base64URL.encode(Array(JSONWriter.compact(payload).utf8))
        let p = SharedDatabase.sharedTokenPrefix
        return p + body + "." + Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array((p + body).utf8)).prefix(16)))
    }

    private func decodeSharedToken(_ t: String) throws -> [String: SharedZonePosition] {
        let bad = CloudKitError.badRequest("change token is not valid (forged, truncated or not issued by this store)")
        let p = SharedDatabase.sharedTokenPrefix
        guard t.hasPrefix(p), t.utf8.count < 1 << 20 else {
            if t.hasPrefix("ck1.") { throw CloudKitError.badRequest("change token belongs to another database, not the shared database of this user and container") }
            throw bad
        }
        guard let secret = try db.tokens.secret.existing() else { throw bad }
        let parts = t.dropFirst(p.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2,
              String(parts[1]) == Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array((p + parts[0]).utf8)).prefix(16))),
              let bytes = Base64URL.decode(String(parts[0])), let j = try? JSONParser.parse(bytes),
              let s = j["s"]?.stringValue, let list = j["z"]?.arrayValue else { throw bad }
        guard s.sameBytes(db.tokens.databaseScopeKey) else {
            throw CloudKitError.badRequest("change token belongs to another database, not the shared database of this user and container")
        }
        var out: [String: SharedZonePosition] = [:]
        for item in list {
            guard let a = item.arrayValue, a.count == 3, let k = a[0].stringValue, let i = a[1].stringValue, let q = a[2].int64Value else { throw bad }
            out[k] = (i, q)
        }
        return out
    }

    /// One zone the next fetch reports: changed (with the position it moves the token to) or
    /// deleted (no position: it leaves the token).
    private struct SharedZoneChange {
        var key: String
        var zone: DatabaseChangesResult.Zone
        var position: SharedZonePosition?
    }

    /// Everything a fetch from `before` would report, in order (shared zones by name then
    /// owner, then the zones gone), and the positions of the zones shared now.
    private func sharedZoneChanges(since before: [String: SharedZonePosition]?) throws
        -> (changes: [SharedZoneChange], now: [String: SharedZonePosition]) {
        let me = db.caller.user!.userRecordName
        var now: [String: SharedZonePosition] = [:]
        var out: [SharedZoneChange] = []
        for sz in try sharedZones() {
            let head = try sz.zone.history.head()
            now[sz.key] = (sz.zone.incarnation, head)
            var changed = true
            if let b = before?[sz.key], b.incarnation == sz.zone.incarnation {
                changed = false
                if b.seq < head {
                    let lookup: (String) throws -> Record? = { try self.sharedRecord(sz, $0) }
                    try sz.zone.history.forEachEntry(after: b.seq, through: head) { e in
                        // A record shared before or after the change (one that left the share is a change too).
                        var versions = [e.record]
                        if let p = e.prev { versions.append(try sz.zone.history.entry(p)?.record) }
                        for case let r? in versions where try ShareVisibility.permission(me, on: r, lookup: lookup) != nil { changed = true; return false }
                        return true
                    }
                }
            }
            if changed { out.append(SharedZoneChange(key: sz.key, zone: DatabaseChangesResult.Zone(zoneID: sz.zone.zoneID, deleted: false, purged: false), position: now[sz.key])) }
        }
        for key in (before ?? [:]).keys.sorted() where now[key] == nil {
            let parts = key.split(separator: "|", omittingEmptySubsequences: false).map { PathEncoding.decodeSimple(String($0)) ?? String($0) }
            guard parts.count == 2 else { continue }
            out.append(SharedZoneChange(key: key, zone: DatabaseChangesResult.Zone(zoneID: ZoneID(zoneName: parts[1], ownerRecordName: parts[0]), deleted: true, purged: false), position: nil))
        }
        return (out, now)
    }

    /// `changes/database` in the shared database: the zones shared with the caller whose
    /// shared records changed since the token, and as deleted those no longer shared with
    /// them (they left, were removed, the share, its root or the zone was deleted), at most
    /// `limit` a page. Nil elsewhere.
    package func databaseChanges(since: String?, limit: Int) throws -> DatabaseChangesResult {
        try db.requireRead()
        let before = try since.map(decodeSharedToken)
        let (all, now) = try sharedZoneChanges(since: before)
        let page = Array(all.prefix(max(limit, 1)))
        // Zones reported move to where they are now; zones with nothing to report move too
        // (nothing they hold is the caller's to see); the rest keep where the caller was.
        var token = before ?? [:]
        let pending = Set(all.map(\.key))
        for (k, pos) in now where !pending.contains(k) { token[k] = pos }
        for c in page { token[c.key] = c.position }
        return DatabaseChangesResult(zones: page.map(\.zone), syncToken: sharedToken(token, secret: try db.tokens.secret.getOrCreate()),
                                     moreComing: all.count > page.count)
    }

    /// For `ck status` in the shared database: how far the device's database bookmark is
    /// behind, counted in the zones the next `database changes` reports (every shared zone
    /// when there is no bookmark).
    package func databaseBookmarkLag() throws -> BookmarkLag {
        try db.requireRead()
        guard let token = try db.bookmarks.token(zone: nil) else {
            return BookmarkLag(state: .none, changes: Int64(try sharedZoneChanges(since: nil).changes.count))
        }
        let before: [String: SharedZonePosition]
        do { before = try decodeSharedToken(token) } catch let e as CloudKitError {
            return BookmarkLag(state: .invalid, changes: nil, reason: e.reason)
        }
        return .behind(Int64(try sharedZoneChanges(since: before).changes.count))
    }
}
