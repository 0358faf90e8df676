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
    package static func time(_ s: String, now: Int64, timeZone: TimeZone?) throws -> Int64? {
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

extension Timestamps {
    /// Milliseconds since 1970 as an ISO-8601 UTC date-time (`2026-11-20T10:00:00.000Z`).
    public static func iso(_ ms: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
