import CKModel
import Foundation

/// A point in a zone's history, as `ck log`, `show`, `diff`, `--at`, `restore`, `revert` and
/// `gc --keep-since` take it (one syntax everywhere, Docs/history.md):
/// - a change token (`ck1.…`), of that zone;
/// - a sequence number: `ZONE@123`, or `123` in the command's `--zone`;
/// - `HEAD`: the newest change;
/// - a time: an ISO-8601 date or date-time (`2026-11-20T10:00`, local time without an offset),
///   `now`, `yesterday` (24 hours ago), `N UNIT ago` (`2h ago`, `90 minutes ago`, `3 days ago`);
/// - otherwise the name of a tag (`ck tag create`).
/// A point is the state after that change: `Z@0` is the empty zone before its first change.
public enum HistoryReference: Equatable, Sendable {
    case token(String)
    case seq(zone: String?, Int64)
    case head
    case time(Int64)
    case tag(String)

    /// Reads a reference; `now` (ms since 1970) and `timeZone` give relative and local times.
    public static func parse(_ raw: String, now: Int64, timeZone: TimeZone?) throws -> HistoryReference {
        let s = raw.trimmingCharacters(in: .whitespaces)
        guard !s.isEmpty else { throw CloudKitError.badRequest("empty history reference (give a change token, ZONE@SEQ, a tag or a time)") }
        if s.hasPrefix("ck1.") { return .token(s) }
        if s == "HEAD" { return .head }
        if let n = Int64(s), n >= 0, s.allSatisfy(\.isASCII) { return .seq(zone: nil, n) }
        if s.allSatisfy({ $0.isASCII && $0.isNumber }) { throw CloudKitError.badRequest("sequence number '\(s)' is too large") }
        if let at = s.lastIndex(of: "@") {
            let digits = s[s.index(after: at)...]
            let zone = String(s[..<at])
            if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), !zone.isEmpty {
                guard let n = Int64(digits) else { throw CloudKitError.badRequest("sequence number in '\(raw)' is too large") }
                try Names.validateZoneName(zone)
                return .seq(zone: zone, n)
            }
        }
        if let t = try time(s, now: now, timeZone: timeZone) { return .time(t) }
        try Names.validateName(s, noun: "tag name")
        return .tag(s)
    }

    /// `now`, `yesterday`, `N UNIT ago`, or an ISO-8601 date or date-time. BAD_REQUEST for
    /// a time outside `Timestamps.range` (`99999999999 weeks ago`), computed without overflow.
    static func time(_ s: String, now: Int64, timeZone: TimeZone?) throws -> Int64? {
        let l = s.lowercased()
        if l == "now" { return now }
        if l == "yesterday" { return now - 86_400_000 }
        if l.hasSuffix(" ago") {
            let body = l.dropLast(4).trimmingCharacters(in: .whitespaces)
            let number = body.prefix { $0.isASCII && $0.isNumber }
            let unit = body.dropFirst(number.count).trimmingCharacters(in: .whitespaces)
            guard let n = Int64(number) else { return nil }
            let units: [String: Int64] = [
                "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
                "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
                "h": 3_600_000, "hr": 3_600_000, "hrs": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
                "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
                "w": 604_800_000, "week": 604_800_000, "weeks": 604_800_000,
            ]
            guard let u = units[unit] else { return nil }
            let (span, o1) = n.multipliedReportingOverflow(by: u)
            let (t, o2) = now.subtractingReportingOverflow(span)
            guard !o1, !o2, Timestamps.range.contains(t) else {
                throw CloudKitError.badRequest("time '\(Names.describe(s))' is out of range: a time lies within \(Timestamps.rangeDescription)")
            }
            return t
        }
        return Timestamps.parseISO8601(s, timeZone: timeZone)
    }

    /// The zone a reference names by itself (`Z@N`; a token names its zone), if any.
    public var namedZone: String? {
        if case .seq(let z?, _) = self { return z }
        return nil
    }

    /// Whether the reference applies to every zone (a tag, a time, HEAD), not to one.
    public var spansZones: Bool {
        switch self {
        case .tag, .time, .head: return true
        case .token, .seq: return false
        }
    }
}

extension Database {
    /// The zone a token (or `Z@N`) names, checked to be a zone token of this database.
    public func zoneName(of ref: HistoryReference) throws -> String? {
        switch ref {
        case .seq(let z, _): return z
        case .token(let raw):
            let t = try ChangeToken.decode(raw, secret: try tokenSecret.existing())
            guard t.kind == .zone else { throw CloudKitError.badRequest("this is a database change token, not a zone change token: it names no point in a zone's history") }
            let parts = t.scopeKey.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let mine = databaseScopeKey.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 6, Array(parts.prefix(4)) == mine, let zone = PathEncoding.decodeSimple(parts[4]) else {
                throw CloudKitError.badRequest("change token belongs to another database, user, container or environment, not the \(scope.rawValue) database")
            }
            return zone
        default: return nil
        }
    }

    /// The sequence number a reference stands for in zone `z`: the state after that change
    /// (0: before the first). `emptyBeforeHistory`: a time or tag before the zone's history
    /// stands for its empty start (diffs of a whole database); otherwise it is an error.
    public func resolve(_ ref: HistoryReference, in z: ZoneStore, emptyBeforeHistory: Bool = false) throws -> Int64 {
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
            if scope == .public || z.zoneID.isDefault {
                throw CloudKitError(.badRequest, "zone '\(zoneName)' has no change tokens (only custom zones of the private and shared databases have change feeds); use \(z.zoneID.zoneName)@SEQ", zoneID: z.zoneID)
            }
            let seq = try checkZoneToken(raw, zone: z, head: head).seq
            return try retained(seq, "the change token")
        case .tag(let name):
            let tag = try tags().load(name)
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
    func relativePath(_ path: String) -> String {
        path.hasPrefix(paths.root + "/") ? String(path.dropFirst(paths.root.count + 1)) : path
    }
}

extension Timestamps {
    /// Milliseconds since 1970 as an ISO-8601 UTC date-time (`2026-11-20T10:00:00.000Z`).
    public static func iso(_ ms: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
