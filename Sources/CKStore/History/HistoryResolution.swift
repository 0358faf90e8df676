import CKModel
import Foundation

/// What a history reference (a change token, `Z@N`, a tag, a time) stands for in one
/// database: the zone it names and the point of that zone's history.
package struct HistoryResolver {
    let db: Database

    package init(_ db: Database) { self.db = db }

    /// The zone a token (or `Z@N`) names, checked to be a zone token of this database.
    package func zoneName(of ref: HistoryReference) throws -> String? {
        switch ref {
        case .seq(let z, _): return z
        case .token(let raw):
            let t = try ChangeToken.decode(raw, secret: try db.tokens.secret.existing())
            guard t.kind == .zone else { throw CloudKitError.badRequest("this is a database change token, not a zone change token: it names no point in a zone's history") }
            let parts = t.scopeKey.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let mine = db.tokens.databaseScopeKey.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 6, Array(parts.prefix(4)) == mine, let zone = PathEncoding.decodeSimple(parts[4]) else {
                throw CloudKitError.badRequest("change token belongs to another database, user, container or environment, not the \(db.scope.rawValue) database")
            }
            return zone
        default: return nil
        }
    }

    /// The sequence number a reference stands for in zone `z`: the state after that change
    /// (0: before the first). `emptyBeforeHistory`: a time or tag before the zone's history
    /// stands for its empty start (diffs of a whole database); otherwise it is an error.
    package func resolve(_ ref: HistoryReference, in z: ZoneStore, emptyBeforeHistory: Bool = false) throws -> Int64 {
        let h = z.history
        let head = try h.head()
        let first = try h.retainedFrom()
        let zoneName = Names.describe(z.zoneID.zoneName)
        func retained(_ seq: Int64, _ what: String) throws -> Int64 {
            if seq < first - 1 {
                throw CloudKitError(.changeTokenExpired, "\(what) is older than the history zone '\(zoneName)' retains: the changes before \(z.zoneID.zoneName)@\(first) were compacted", zoneID: z.zoneID).with(.readRetainedHistory)
            }
            return seq
        }
        switch ref {
        case .head:
            return head
        case .seq(let named, let n):
            if let named, !named.sameBytes(z.zoneID.zoneName) {
                throw CloudKitError(.badRequest, "reference '\(Names.describe(named))@\(n)' names zone '\(Names.describe(named))', not zone '\(zoneName)'", zoneID: z.zoneID)
            }
            if n > head {
                throw CloudKitError(.badRequest, "zone '\(zoneName)' has no change \(n): its history ends at \(head)", zoneID: z.zoneID)
            }
            return try retained(n, "change \(n)")
        case .token(let raw):
            if db.scope == .public || z.zoneID.isDefault {
                throw CloudKitError(.badRequest, "zone '\(zoneName)' has no change tokens (only custom zones of the private and shared databases have change feeds); use \(z.zoneID.zoneName)@SEQ", zoneID: z.zoneID)
            }
            let seq = try db.tokens.checkZone(raw, zone: z, head: head).seq
            return try retained(seq, "the change token")
        case .tag(let name):
            let tag = try TagStore(of: db).load(name)
            guard let point = tag.point(ofZoneAt: relativePath(z.directory)) else { return 0 }
            guard point.incarnation.sameBytes(z.incarnation) else {
                throw CloudKitError(.badRequest, "tag '\(Names.describe(name))' names an earlier zone '\(zoneName)' (deleted and made again since)", zoneID: z.zoneID)
            }
            return try retained(min(point.seq, head), "tag '\(Names.describe(name))'")
        case .time(let t):
            return try seq(atTime: t, in: z, head: head, first: first, emptyBeforeHistory: emptyBeforeHistory)
        }
    }

    /// The last change at or before time `t` (entry timestamps increase with the history).
    private func seq(atTime t: Int64, in z: ZoneStore, head: Int64, first: Int64, emptyBeforeHistory: Bool) throws -> Int64 {
        let h = z.history
        let zoneName = Names.describe(z.zoneID.zoneName)
        func stamp(_ seq: Int64) throws -> Int64? { try h.entry(seq)?.timestamp }
        guard head >= first, let firstStamp = try stamp(first) else {
            if emptyBeforeHistory && head == 0 { return 0 }
            if head == 0 { throw CloudKitError(.badRequest, "zone '\(zoneName)' has no history yet: no change is at \(Timestamps.iso(t))", zoneID: z.zoneID) }
            return head
        }
        if t < firstStamp {
            if first == 1 {
                if emptyBeforeHistory { return 0 }
                throw CloudKitError(.badRequest, "\(Timestamps.iso(t)) is before the history of zone '\(zoneName)', which starts at \(Timestamps.iso(firstStamp))", zoneID: z.zoneID)
            }
            if let s = try stamp(first - 1), s <= t { return first - 1 }
            throw CloudKitError(.changeTokenExpired, "\(Timestamps.iso(t)) is older than the history zone '\(zoneName)' retains (the changes before \(Timestamps.iso(firstStamp)) were compacted)", zoneID: z.zoneID).with(.readRetainedHistory)
        }
        // Binary search for the last entry at or before t in [first, head].
        var lo = first, hi = head
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2
            if let s = try stamp(mid), s <= t { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// A path below the data directory, as tags record zones.
    private func relativePath(_ path: String) -> String {
        path.hasPrefix(db.paths.root + "/") ? String(path.dropFirst(db.paths.root.count + 1)) : path
    }
}
