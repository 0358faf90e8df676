import CKCore
import Foundation

extension RecordCommands {
    static let query: Command = Command(["record", "query"],
        synopsis: "--type T [--filter 'FIELD OP VALUE'…] [--sort FIELD[:desc]…] [--limit N] [--continue MARKER] [--fields a,b]",
        summary: "Query records (filters, sorts, pages of at most 200)",
        options: [
            OptionSpec("--type", value: "T", help: "record type to query (or give a records/query body on stdin)"),
            OptionSpec("--filter", value: "'FIELD OP VALUE'", repeatable: true, help: "a filter; repeat to AND several"),
            OptionSpec("--sort", value: "FIELD[:asc|:desc]", repeatable: true, help: "sort order; repeat for ties"),
            OptionSpec("--limit", value: "N", help: "results per page, 1…200 (default 200)"),
            OptionSpec("--continue", value: "MARKER", help: "the continuationMarker of the previous page"),
            fieldsOption,
        ],
        details: """
        OP is ==, !=, <, <=, >, >= or a comparator name: BEGINS_WITH, NOT_BEGINS_WITH, IN, NOT_IN,
        LIST_CONTAINS, NOT_LIST_CONTAINS, LIST_CONTAINS_ANY, NOT_LIST_CONTAINS_ANY,
        LIST_CONTAINS_ALL, NOT_LIST_CONTAINS_ALL, LIST_MEMBER_BEGINS_WITH,
        NOT_LIST_MEMBER_BEGINS_WITH, CONTAINS_ALL_TOKENS, CONTAINS_ANY_TOKENS, NEAR.
        VALUE is typed like field arguments ("quoted" is always a STRING; TYPE:value is explicit);
        IN and the LIST_*_ANY/ALL comparators take a comma-separated list or a JSON array;
        NEAR takes 'lat,lon RADIUS' with RADIUS in m or km (e.g. 'place NEAR 37.33,-122.03 5km').
        String equality ignores case; BEGINS_WITH does not; token searches ignore case and
        diacritics. Without --type a Web Services records/query body is read from stdin.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        var req: QueryRequest
        var zone = inv.globals.zone
        if let type = inv.args.value("--type") {
            try Names.validateRecordType(type)
            req = QueryRequest(recordType: type)
            req.filters = try inv.args.values("--filter").map { try FilterArgument.parse($0, command: inv.command.path) }
            req.sorts = try inv.args.values("--sort").map { raw in
                var name = raw
                var asc = true
                if let c = raw.lastIndex(of: ":") {
                    let dir = raw[raw.index(after: c)...].lowercased()
                    guard dir == "asc" || dir == "desc" else { throw inv.usageError("sort '\(raw)' must be FIELD, FIELD:asc or FIELD:desc") }
                    asc = dir == "asc"
                    name = String(raw[..<c])
                }
                if name != "recordName" && name != "createdTimestamp" && name != "modifiedTimestamp" { try Names.validateFieldName(name) }
                return QuerySort(fieldName: name, ascending: asc)
            }
        } else {
            if !inv.args.values("--filter").isEmpty || !inv.args.values("--sort").isEmpty {
                throw inv.usageError("--filter and --sort need --type")
            }
            let (r, z) = try QueryRequest.parse(try inv.readJSONInput(what: "query request"))
            req = r
            if let z = z { zone = z }
        }
        if let n = try inv.positiveInt("--limit", max: Limits.resultsPerPage) { req.resultsLimit = n }
        if let m = inv.args.value("--continue") { req.continuationMarker = m }
        if let k = try desiredKeys(inv) { req.desiredKeys = k }
        let result = try inv.database().query(zone: zone, req)
        for w in result.warnings { inv.io.writeErr("ck: warning: \(w)\n") }
        var doc: [String: JSONValue] = ["records": .array(result.records.map { $0.response(inv.style, desiredKeys: req.desiredKeys) })]
        if let m = result.continuationMarker { doc["continuationMarker"] = .string(m) }
        inv.emit(.object(doc), listKey: "records")
        return ExitCode.success
    }
}

/// `'FIELD OP VALUE'` filters, cktool style.
enum FilterArgument {
    static func parse(_ raw: String, command: [String]) throws -> QueryFilter {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3 else { throw UsageError("filter '\(raw)' must look like 'FIELD OP VALUE'", command: command) }
        let field = parts[0]
        if SystemFieldNames.all.contains(field) == false { try Names.validateFieldName(field) }
        guard let c = QueryComparator(name: parts[1]) else {
            throw UsageError("unknown comparator '\(parts[1])' in filter '\(raw)'", command: command)
        }
        var valueText = parts[2].trimmingCharacters(in: .whitespaces)
        var distance: Double?
        if c == .near {
            let np = valueText.split(separator: " ").map(String.init)
            guard np.count == 2, let d = parseDistance(np[1]) else {
                throw UsageError("NEAR needs 'lat,lon RADIUS' (RADIUS like 500m or 5km) in filter '\(raw)'", command: command)
            }
            valueText = np[0]
            distance = d
        }
        let fa = FieldArguments(currentDirectory: "/", command: command)
        var none: [String: [UInt8]] = [:]
        func scalar(_ text: String) throws -> RecordField {
            if text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") {
                return RecordField(type: FieldType(.string), value: .string(String(text.dropFirst().dropLast())))
            }
            if let colon = text.firstIndex(of: ":"), let t = FieldType(tag: String(text[..<colon])), !t.isList, t.base != .asset, t.base != .unknown {
                return RecordField(type: t, value: try fa.convert(String(text[text.index(after: colon)...]), type: t, name: field, assets: &none))
            }
            var t = FieldArguments.infer(text)
            if c == .near { t = FieldType(.location) }
            if field == "recordName" || field == "parent" { t = FieldType(.reference) }
            return RecordField(type: t, value: try fa.convert(text, type: t, name: field, assets: &none))
        }
        let value: RecordField
        if c.takesListValue {
            var items: [RecordField]
            if valueText.hasPrefix("[") {
                let j: JSONValue
                do { j = try JSONParser.parse(valueText) } catch { throw CloudKitError.badRequest("filter '\(raw)': list is not valid JSON: \(error)") }
                guard let a = j.arrayValue, !a.isEmpty else { throw CloudKitError.badRequest("filter '\(raw)': expected a non-empty JSON array") }
                items = try a.map { e in
                    if let s = e.stringValue { return RecordField(type: FieldType(.string), value: .string(s)) }
                    guard let f = try RecordField.parse(name: field, json: ["value": e]) else { throw CloudKitError.badRequest("filter '\(raw)': null in list") }
                    return f
                }
            } else {
                items = try valueText.split(separator: ",").map { try scalar(String($0).trimmingCharacters(in: .whitespaces)) }
            }
            guard let first = items.first else { throw CloudKitError.badRequest("filter '\(raw)': empty list") }
            value = RecordField(type: FieldType(first.type.base, list: true), value: .array(items.map(\.value)))
        } else {
            value = try scalar(valueText)
        }
        let f = QueryFilter(fieldName: field, comparator: c, value: value, distance: distance)
        try f.validate()
        return f
    }

    static func parseDistance(_ s: String) -> Double? {
        let l = s.lowercased()
        if l.hasSuffix("km"), let v = Double(l.dropLast(2)), v >= 0 { return v * 1000 }
        if l.hasSuffix("m"), let v = Double(l.dropLast(1)), v >= 0 { return v }
        if let v = Double(l), v >= 0 { return v }
        return nil
    }
}

enum SystemFieldNames {
    static let all: Set<String> = [
        "recordName", "createdTimestamp", "modifiedTimestamp", "createdUserRecordName", "modifiedUserRecordName", "parent", "share",
        "___recordID", "___createTime", "___modTime", "___createdBy", "___modifiedBy", "___parent", "___share",
    ]
}

extension QueryComparator {
    var takesListValue: Bool {
        switch self {
        case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll: return true
        default: return false
        }
    }
}
