import Foundation

/// ISO-8601 dates and date-times to milliseconds since 1970: `2019-10-28`, `2019-10-28T09:30`,
/// `2019-10-28 09:30:15.250Z`, `2019-10-28T09:30:00+02:00`. A value with an offset (`Z`,
/// `+02:00`, `-0500`) is that exact instant; one without is a wall-clock time in `timeZone`
/// (the command line passes the user's local zone, as `Calendar.current` is in Apple's
/// CloudKit tutorial; without one, UTC).
public enum Timestamps {
    /// The instants a TIMESTAMP holds and a time reference names, in ms since 1970: JavaScript's
    /// Date range (±100,000,000 days, about ±273,790 years), which CloudKit JS clients can
    /// represent. Outside it a value is BAD_REQUEST, never an overflow.
    public static let range: ClosedRange<Int64> = -8_640_000_000_000_000...8_640_000_000_000_000
    package static let rangeDescription = "±8640000000000000 ms (about 273,790 years) of 1970"

    /// BAD_REQUEST for a TIMESTAMP value of field `field` outside `range`.
    package static func check(_ ms: Int64, field: String) throws {
        guard range.contains(ms) else {
            throw CloudKitError.badRequest("field '\(field)' is TIMESTAMP but \(ms) is out of range: a timestamp is milliseconds since 1970 within \(rangeDescription)")
        }
    }

    public static func parseISO8601(_ s: String, timeZone: TimeZone? = nil) -> Int64? {
        let u = Array(s.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= u.count else { return nil }
            var v = 0
            for k in 0..<n {
                let b = u[i + k]
                guard b >= 0x30 && b <= 0x39 else { return nil }
                v = v * 10 + Int(b - 0x30)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < u.count, u[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = digits(4), expect(0x2D), let mo = digits(2), expect(0x2D), let d = digits(2) else { return nil }
        guard (1...12).contains(mo), (1...daysIn(month: mo, year: y)).contains(d) else { return nil }
        // Wall-clock seconds, counted as if the zone were UTC.
        var secs = Int64(daysFromCivil(y, mo, d)) * 86400
        var ms: Int64 = 0
        var offset: Int64?
        if i < u.count {
            guard u[i] == UInt8(ascii: "T") || u[i] == UInt8(ascii: " ") else { return nil }
            i += 1
            guard let h = digits(2), expect(0x3A), let mi = digits(2), h < 24, mi < 60 else { return nil }
            secs += Int64(h * 3600 + mi * 60)
            if expect(0x3A) {
                guard let sec = digits(2), sec < 61 else { return nil }
                secs += Int64(sec)
                if expect(0x2E) {
                    var frac = 0, n = 0
                    while i < u.count, u[i] >= 0x30 && u[i] <= 0x39 {
                        if n < 3 { frac = frac * 10 + Int(u[i] - 0x30); n += 1 }
                        i += 1
                    }
                    guard n > 0 else { return nil }
                    while n < 3 { frac *= 10; n += 1 }
                    ms = Int64(frac)
                }
            }
            if i < u.count {
                if expect(UInt8(ascii: "Z")) {
                    offset = 0
                } else if u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
                    let sign: Int64 = u[i] == UInt8(ascii: "+") ? 1 : -1
                    i += 1
                    guard let oh = digits(2) else { return nil }
                    _ = expect(0x3A)
                    guard let om = digits(2), oh < 24, om < 60 else { return nil }
                    offset = sign * Int64(oh * 3600 + om * 60)
                } else { return nil }
            }
        }
        guard i == u.count else { return nil }
        if let o = offset { return (secs - o) * 1000 + ms }
        guard let tz = timeZone else { return secs * 1000 + ms }
        return utcSeconds(wallClock: secs, in: tz) * 1000 + ms
    }

    /// The instant a wall-clock time names in a zone. In the hour a change to summer time skips
    /// it is read with the offset before the change (02:30 becomes 03:30), as `Calendar` does;
    /// in the hour a change back repeats, it is the earlier of the two instants.
    package static func utcSeconds(wallClock wall: Int64, in tz: TimeZone) -> Int64 {
        func offset(_ t: Int64) -> Int64 { Int64(tz.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))) }
        let before = offset(wall - 86400), after = offset(wall + 86400)
        let fits = Set([wall - before, wall - after]).filter { offset($0) == wall - $0 }
        return fits.min() ?? wall - before
    }

    package static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    package static func daysIn(month m: Int, year y: Int) -> Int {
        [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    package static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}
