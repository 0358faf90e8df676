import CKModel
import Foundation

extension CloudKitAPI {
    /// The console's records table: records/query with ck's own `--filter` texts (`priority >=
    /// 3`, `title BEGINS_WITH Get`) ANDed to the body's filters, each read as `ck record query
    /// --filter` reads it — typed by the schema, a date without an offset in the zone
    /// `timeZoneName` names (the browser's; nil or unknown here: UTC) — so the table and the command it shows
    /// answer the same records.
    public func queryRecords(_ r: QueryRecordsRequest, filterTexts: [String], timeZoneName: String?, as caller: Caller) throws -> QueryRecordsResponse {
        guard filterTexts.count <= Self.maxFilterTexts else {
            throw CloudKitError.badRequest("a query takes at most \(Self.maxFilterTexts) filters, not \(filterTexts.count)")
        }
        // A zone this machine does not know (no tzdata, a browser's Etc/Unknown) is UTC, as the
        // CLI falls back when TZ names none: a filter without a date does not care.
        let timeZone = timeZoneName.flatMap(TimeZone.init(identifier:)) ?? TimeZone(secondsFromGMT: 0)!
        let syntax = try filterTexts.map { text in
            do { return try QueryFilterText.scan(text) } catch let e as QueryFilterText.SyntaxError { throw CloudKitError.badRequest(e.message) }
        }
        var r = r
        r.query.filters += try typedFilters(syntax, recordType: r.query.recordType, zoneName: r.zoneName ?? ZoneID.defaultZoneName,
                                            timeZone: { timeZone }, as: caller)
        return try queryRecords(r, as: caller)
    }

    /// Filters a console query may add: more than a table's columns, fewer than would make a
    /// query string a burden.
    static let maxFilterTexts = 20
}
