import CKCore
import CKJSON
import CKModel
import Foundation

/// Turns the items of a response into flat rows for `--format table`, `csv` and `tsv`: one
/// cell per column, the same cells in all three formats (only the writing differs).
///
/// Columns come in this order: what names the item (recordName, recordType; zoneName for
/// zones; subscriptionID; …), then a record's fields sorted by name, then a record's metadata
/// (recordChangeTag, zoneName, created, createdBy, modified, modifiedBy, deleted), then any
/// other key sorted by name (nested keys as dotted paths, `notificationInfo.alertBody`), then
/// an error's serverErrorCode, reason and retryAfter.
struct TabularRows {
    /// Where a column goes: its group, its place in the group, then its name.
    struct Rank: Comparable {
        var group: Int
        var index: Int
        var name: String
        static func < (a: Rank, b: Rank) -> Bool {
            (a.group, a.index) != (b.group, b.index) ? (a.group, a.index) < (b.group, b.index)
                : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
        }
    }

    /// Keys that name an item, in the order they lead a row.
    static let identity = ["seq", "timestamp", "notificationType", "recordName", "recordType", "subscriptionID", "subscriptionType",
                           "zoneName", "ownerRecordName", "zoneType", "role", "userRecordName"]
    /// A record's metadata columns, after its fields.
    static let recordMetadata = ["recordChangeTag", "zoneName", "created", "createdBy", "modified", "modifiedBy", "deleted"]
    /// An error dictionary's columns, last.
    static let errorColumns = ["serverErrorCode", "reason", "retryAfter"]
    /// Column names a field's own column must not take.
    static let reserved = Set(identity + recordMetadata + errorColumns)

    let time: LocalTime
    private(set) var ranks: [String: Rank] = [:]
    private(set) var rows: [[String: String]] = []

    init(time: LocalTime) { self.time = time }

    /// The columns seen so far, in order.
    var columns: [String] { ranks.sorted { $0.value < $1.value }.map(\.key) }

    mutating func add(_ item: JSONValue) {
        var row: [String: String] = [:]
        for (name, rank, cell) in cells(item) {
            row[name] = cell
            if let r = ranks[name] { if rank < r { ranks[name] = rank } } else { ranks[name] = rank }
        }
        rows.append(row)
    }

    /// The cells of one item. Which kind of item it is shows in its keys.
    func cells(_ item: JSONValue) -> [(String, Rank, String)] {
        guard let o = item.objectValue else { return [("value", Rank(group: 0, index: 0, name: "value"), cell(item, key: "value"))] }
        if o["serverErrorCode"] != nil { return errorCells(o) }
        if o["recordName"] != nil, o["notificationType"] == nil { return recordCells(o) }
        return genericCells(o)
    }

    private func identityRank(_ k: String) -> Rank? {
        Self.identity.firstIndex(of: k).map { Rank(group: 0, index: $0, name: k) }
    }

    private func metadataRank(_ k: String) -> Rank {
        Rank(group: 2, index: Self.recordMetadata.firstIndex(of: k) ?? 0, name: k)
    }

    /// A record or tombstone: name and type, fields, metadata. The device IDs of `created`
    /// and `modified` and an empty `pluginFields` are left to JSON.
    private func recordCells(_ o: [String: JSONValue]) -> [(String, Rank, String)] {
        var out: [(String, Rank, String)] = []
        for k in ["recordName", "recordType"] { if let v = o[k] { out.append((k, identityRank(k)!, cell(v, key: k))) } }
        for (name, field) in o["fields"]?.objectValue ?? [:] {
            // A field named like a metadata column keeps its own column.
            let column = Self.reserved.contains(name) ? "fields." + name : name
            out.append((column, Rank(group: 1, index: 0, name: column), fieldCell(field)))
        }
        if let v = o["recordChangeTag"] { out.append(("recordChangeTag", metadataRank("recordChangeTag"), cell(v, key: ""))) }
        if let z = o["zoneID"]?["zoneName"] { out.append(("zoneName", metadataRank("zoneName"), cell(z, key: ""))) }
        for k in ["created", "modified"] {
            guard let m = o[k] else { continue }
            if let t = m["timestamp"] { out.append((k, metadataRank(k), cell(t, key: "timestamp"))) }
            if let u = m["userRecordName"] { out.append((k + "By", metadataRank(k + "By"), cell(u, key: ""))) }
        }
        if let v = o["deleted"] { out.append(("deleted", metadataRank("deleted"), cell(v, key: ""))) }
        var rest = o
        for k in ["recordName", "recordType", "fields", "recordChangeTag", "zoneID", "created", "modified", "deleted"] { rest[k] = nil }
        for (path, v) in flatten(.object(rest), prefix: "") { out.append((path, Rank(group: 3, index: 0, name: path), cell(v, key: path))) }
        return out
    }

    /// An error dictionary: what it is about, then its code and reason. `uuid`, `ckErrorCode`
    /// and a conflict's `serverRecord` are left to JSON.
    private func errorCells(_ o: [String: JSONValue]) -> [(String, Rank, String)] {
        var out: [(String, Rank, String)] = []
        for k in ["recordName", "subscriptionID"] { if let v = o[k] { out.append((k, identityRank(k)!, cell(v, key: k))) } }
        if let z = o["zoneID"]?["zoneName"] { out.append(("zoneName", metadataRank("zoneName"), cell(z, key: ""))) }
        for (i, k) in Self.errorColumns.enumerated() { if let v = o[k] { out.append((k, Rank(group: 4, index: i, name: k), cell(v, key: k))) } }
        return out
    }

    /// Anything else (zones, subscriptions, notifications, users, events, single results):
    /// naming keys first, then the rest by name, nested objects as dotted paths; a zoneID
    /// shows as its zoneName, ownerRecordName and zoneType.
    private func genericCells(_ o: [String: JSONValue]) -> [(String, Rank, String)] {
        var out: [(String, Rank, String)] = []
        for (path, v) in flatten(.object(o), prefix: "") {
            let rank = identityRank(path) ?? Rank(group: 3, index: 0, name: path)
            out.append((path, rank, cell(v, key: path)))
        }
        return out
    }

    /// Leaf values by dotted path; a zoneID's keys stand alone, empty objects vanish.
    func flatten(_ v: JSONValue, prefix: String) -> [(String, JSONValue)] {
        guard let o = v.objectValue, !isTypedValue(o) else { return [(prefix, v)] }
        var out: [(String, JSONValue)] = []
        for (k, child) in o {
            if k == "zoneID", let z = child.objectValue {
                for (zk, zv) in z { out.append((zk, zv)) }
            } else {
                out += flatten(child, prefix: prefix.isEmpty ? k : prefix + "." + k)
            }
        }
        return out
    }

    /// `{type, value}`: a field value (a filter's fieldValue), shown as one cell.
    private func isTypedValue(_ o: [String: JSONValue]) -> Bool {
        o.count == 2 && o["type"]?.stringValue.flatMap(FieldType.init(tag:)) != nil && o["value"] != nil
    }

    /// One value as text. `key` is the value's name or path: a `timestamp` in milliseconds
    /// shows as local time.
    func cell(_ v: JSONValue, key: String) -> String {
        switch v {
        case .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .string(let s): return s
        case .int, .double:
            if key == "timestamp" || key.hasSuffix(".timestamp"), let ms = v.int64Value { return time.iso(ms) }
            return JSONWriter.compact(v)
        case .array(let a): return a.map { cell($0, key: "") }.joined(separator: ", ")
        case .object(let o):
            if isTypedValue(o) { return fieldCell(v) }
            // A query filter: `fieldName COMPARATOR value`.
            if let f = o["fieldName"]?.stringValue, let c = o["comparator"]?.stringValue {
                return [f, c, o["fieldValue"].map(fieldCell) ?? ""].joined(separator: " ")
            }
            return JSONWriter.compact(v)
        }
    }

    /// A field `{type, value}` as people read it: TIMESTAMP in local time, a REFERENCE as its
    /// recordName, a LOCATION as `lat,lon`, an asset as its checksum prefix and size, lists
    /// joined with ", " (locations with "; ").
    func fieldCell(_ field: JSONValue) -> String {
        guard let value = field["value"] else { return "" }
        guard let tag = field["type"]?.stringValue, let type = FieldType(tag: tag) else { return cell(value, key: "") }
        if type.isList {
            guard let items = value.arrayValue else { return cell(value, key: "") }
            return items.map { scalarCell($0, base: type.base) }.joined(separator: type.base == .location ? "; " : ", ")
        }
        return scalarCell(value, base: type.base)
    }

    private func scalarCell(_ v: JSONValue, base: FieldType.Base) -> String {
        switch base {
        case .timestamp:
            if let ms = v.int64Value { return time.iso(ms) }
        case .reference:
            if let n = v["recordName"]?.stringValue { return n }
        case .location:
            if let lat = v["latitude"], let lon = v["longitude"] { return JSONWriter.compact(lat) + "," + JSONWriter.compact(lon) }
        case .asset:
            guard let o = v.objectValue else { break }
            var parts: [String] = []
            // The store names an asset's file by the SHA-256 of its bytes: its first 12 hex digits.
            if let url = o["downloadURL"]?.stringValue, let last = url.split(separator: "/").last, last.count == 64 {
                parts.append(String(last.prefix(12)))
            }
            if let size = o["size"] { parts.append("(\(JSONWriter.compact(size)) bytes)") }
            if !parts.isEmpty { return parts.joined(separator: " ") }
        default: break
        }
        return cell(v, key: "")
    }
}

/// Milliseconds since 1970 as ISO 8601 local time with its offset,
/// `2026-11-23T10:15:00.123+01:00`, in the zone of `TZ` (the system's when unset).
struct LocalTime {
    let zone: TimeZone

    /// The zone field arguments read dates in, so what goes in shows the same coming out.
    init(environment: [String: String]) { zone = FieldText.localTimeZone(environment) }

    func iso(_ ms: Int64) -> String {
        // Beyond ±275,000 years (JavaScript's Date range): the number as it is.
        guard Timestamps.range.contains(ms) else { return String(ms) }
        // Whole minutes, so the text names the exact instant even for a zone's old local mean
        // time (Paris before 1911 was +00:09:21).
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000)) / 60 * 60
        let local = ms + Int64(offset) * 1000
        let (days, msOfDay) = floorDivide(local, 86_400_000)
        let (y, m, d) = Self.civil(days)
        let s = msOfDay / 1000
        let sign = offset < 0 ? "-" : "+"
        let off = abs(offset) / 60
        let year = (0...9999).contains(y) ? pad(y, 4) : (y < 0 ? "-" : "+") + pad(abs(y), 6)
        return "\(year)-\(pad(m, 2))-\(pad(d, 2))T\(pad(s / 3600, 2)):\(pad(s / 60 % 60, 2)):\(pad(s % 60, 2)).\(pad(msOfDay % 1000, 3))"
            + "\(sign)\(pad(off / 60, 2)):\(pad(off % 60, 2))"
    }

    private func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    private func pad<I: BinaryInteger>(_ n: I, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's
    /// days_from_civil inverse).
    static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
