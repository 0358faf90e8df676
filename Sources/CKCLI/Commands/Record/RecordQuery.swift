import CKCore
import CKModel
import Foundation

extension RecordCommands {
    static let query: CommandSpec = CommandSpec(synopsis: "--type T [--filter 'FIELD OP VALUE'…] [--sort FIELD[:desc]…] [--limit N] [--continue MARKER] [--fields a,b] [--at REF] [--explain]",
        summary: "Query records (filters, sorts, pages of at most 200)",
        options: [
            OptionSpec("--type", aliases: ["--record-type"], value: "T", help: "record type to query (or give a records/query body on stdin)"),
            OptionSpec("--filter", value: "'FIELD OP VALUE'", repeatable: true, help: "a filter; repeat to AND several"),
            OptionSpec("--sort", value: "FIELD[:asc|:desc]", repeatable: true, help: "sort order; repeat for ties"),
            OptionSpec("--limit", value: "N", help: "at most N results per page [default: 200; the server caps pages at 200]"),
            OptionSpec("--continue", value: "MARKER", help: "the continuationMarker of the previous page"),
            OptionSpec("--all", help: "every page, streamed in one process (like gh --paginate): {records: [...]} without a marker"),
            OptionSpec("--explain", help: "run nothing: print the indexes the query needs, which the schema has, and their .ckdb lines"),
            fieldsOption,
            HistoryReferences.atOption,
        ],
        details: """
        OP is =, ==, !=, <, <=, >, >= (spaces around a symbol are optional: priority>=3) or a
        comparator name, cktool's spelling: EQUALS, NOT_EQUALS, LESS_THAN, LESS_THAN_OR_EQUALS,
        GREATER_THAN, GREATER_THAN_OR_EQUALS, BEGINS_WITH, NOT_BEGINS_WITH, IN, NOT_IN,
        LIST_CONTAINS, NOT_LIST_CONTAINS, LIST_CONTAINS_ANY, NOT_LIST_CONTAINS_ANY (or
        LIST_NOT_CONTAINS_ANY), LIST_CONTAINS_ALL, NOT_LIST_CONTAINS_ALL,
        LIST_MEMBER_BEGINS_WITH, NOT_LIST_MEMBER_BEGINS_WITH, CONTAINS_ALL_TOKENS,
        CONTAINS_ANY_TOKENS, NEAR.
        VALUE is the rest of the filter, read as the type the schema has for FIELD (title == -5
        on a STRING field is the string "-5"); a value that cannot be that type is BAD_REQUEST
        (exit 6), not an empty result. For a field the schema does not know, VALUE is inferred
        as in 'record save'. "Quoted" values keep spaces and take \\\" and \\\\ escapes (a quoted
        value of an unknown field is a STRING); TYPE:value gives the type. Dates without an
        offset are local time ($TZ). IN and the LIST_*_ANY/ALL comparators take a
        comma-separated list or a JSON array; NEAR takes 'lat,lon RADIUS' with RADIUS in m or
        km (e.g. 'place NEAR 37.33,-122.03 5km').
        String equality ignores case; BEGINS_WITH does not; token searches ignore case and
        diacritics. Without --type a Web Services records/query body is read from stdin; its
        zoneWide: true (without a zoneID or --zone) queries every zone of the database, and
        numbersAsStrings: true answers INT64 and DOUBLE values as strings.

        As in CloudKit, development and production alike answer only what the schema has
        indexes for: a query without a filter needs "___recordID" REFERENCE QUERYABLE, a filter
        the index of its comparator (QUERYABLE; SORTABLE for <, <=, >, >=; SEARCHABLE for
        tokens), a sort SORTABLE; bytes, assets and encrypted fields take no index and a list
        is never sortable. Otherwise BAD_REQUEST (exit 6) in CloudKit's words, e.g. "Field
        'recordName' is not marked queryable", with the command that adds the index (ck
        schema index add). --explain prints what the query needs: {recordType, environment,
        recordTypeExists, answerable, refusal?, indexes: [{field, queryName, index, present,
        ckdb?, impossible?}]}. 'ck record list' reads a zone without any index.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        var req: QueryRequest
        var zone = inv.zoneGiven
        var bodyOptions = (zoneWide: false, numbersAsStrings: false)
        var filters: [FilterSyntax] = []
        if let type = inv.args.value("--type") {
            try Names.validateRecordType(type)
            req = QueryRequest(recordType: type)
            filters = try inv.args.values("--filter").map { try FilterArgument.scan($0, command: inv.command.path) }
            req.sorts = try inv.args.values("--sort").map { raw in
                var name = raw
                var asc = true
                if let c = raw.lastIndex(of: ":") {
                    let dir = raw[raw.index(after: c)...].lowercased()
                    guard dir == "asc" || dir == "desc" else { throw inv.usageError("sort '\(raw)' must be FIELD, FIELD:asc or FIELD:desc") }
                    asc = dir == "asc"
                    name = String(raw[..<c])
                }
                // Sorts take the system fields CloudKit sorts on by their query names.
                if ![SystemField.recordName, .createdTimestamp, .modifiedTimestamp].contains(where: { $0.rawValue == name }) { try Names.validateFieldName(name) }
                return QuerySort(fieldName: name, ascending: asc)
            }
        } else {
            if !inv.args.values("--filter").isEmpty || !inv.args.values("--sort").isEmpty {
                throw inv.usageError("--filter and --sort need --type")
            }
            let parsed = try QueryRecordsRequest(json: try inv.readJSONInput(what: "query request"))
            req = parsed.query
            if let z = parsed.zoneName { zone = z }
            // --zone names a zone, as a zoneID does: then the query is of that zone alone.
            bodyOptions = (parsed.zoneWide && inv.zoneGiven == nil, parsed.numbersAsStrings)
        }
        if let n = try inv.positiveInt("--limit") { req.resultsLimit = n }
        if let m = inv.args.value("--continue") { req.continuationMarker = m }
        if let k = try desiredKeys(inv) { req.desiredKeys = k }
        let caller = try inv.caller()
        req.filters += try FilterArgument.typed(filters, recordType: req.recordType, zone: zone, inv: inv, caller: caller)
        var request = QueryRecordsRequest(req, zoneName: zone, at: try inv.atReference())
        (request.zoneWide, request.numbersAsStrings) = bodyOptions
        if inv.args.has("--explain") {
            for o in ["--all", "--continue", "--at"] where inv.args.has(o) || inv.args.value(o) != nil {
                throw inv.usageError("--explain runs no query, so it takes no \(o)")
            }
            inv.print(try inv.api.explainQuery(request, as: caller))
            return ExitCode.success
        }
        if inv.args.has("--all") {
            // Page after page, each printed as it comes: the records of one response body.
            try inv.printer.streamBatches(listKey: "records") { batch in
                try inv.api.queryAllRecords(request, as: caller) { page in
                    let items = page.items
                    batch(items.count) { items[$0] }
                    return inv.io.writable()
                }
            }
            return ExitCode.success
        }
        inv.print(try inv.api.queryRecords(request, as: caller))
        return ExitCode.success
    }
}
