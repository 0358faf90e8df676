import CKJSON
import CKModel
import Foundation

/// A `'FIELD OP VALUE'` filter whose form is checked; its value is read once the field's type
/// is known.
public struct FilterSyntax: Sendable {
    public var raw: String
    public var field: String
    public var comparator: QueryComparator
    public var value: String
    /// Meters, for NEAR.
    public var distance: Double?
}

/// `'FIELD OP VALUE'` filters, cktool style, as `ck record query --filter`, `ck subscribe
/// query --filter` and the console take them: `priority >= 3`, `priority>=3`, `title == "say \"hi\""`,
/// `title BEGINS_WITH Get`, `place NEAR 37.33,-122.03 5km`. The value takes the type the schema
/// has for the field (else it is inferred as field arguments are), so a value that cannot be
/// that type is refused instead of matching nothing.
public enum QueryFilterText {
    static let symbols: Set<Character> = ["=", "!", "<", ">"]

    /// A filter whose form is wrong: the command line's usage error (exit 2), a request's
    /// BAD_REQUEST.
    public struct SyntaxError: Error, Sendable {
        public let message: String
    }

    /// One filter without the schema's help (values are inferred).
    public static func parse(_ raw: String, known: FieldTypeHint? = nil, timeZone: @escaping @Sendable () -> TimeZone = { .current }) throws -> QueryFilter {
        try read(try scan(raw), known: known, timeZone: timeZone)
    }

    /// Splits `FIELD OP VALUE`; a symbol needs no spaces around it (`priority>=3`), a
    /// comparator name does.
    public static func scan(_ raw: String) throws -> FilterSyntax {
        let form = "filter '\(raw)' must look like 'FIELD OP VALUE' (e.g. 'priority >= 3' or 'title BEGINS_WITH Get')"
        var rest = trimmingWhitespace(raw[...])
        let field = String(rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        guard !field.isEmpty else { throw SyntaxError(message: form) }
        rest = rest.dropFirst(field.count).drop { $0 == " " || $0 == "\t" }
        let op: Substring
        if let c = rest.first, symbols.contains(c) {
            op = rest.prefix { symbols.contains($0) }
        } else {
            op = rest.prefix { $0 != " " && $0 != "\t" }
        }
        guard !op.isEmpty else { throw SyntaxError(message: form) }
        guard let c = QueryComparator(name: String(op)) else {
            if let said = nsPredicateOperators[op.uppercased()] {
                throw SyntaxError(message: "unknown comparator '\(op)' in filter '\(raw)': that is NSPredicate's; \(said)")
            }
            throw SyntaxError(message: "unknown comparator '\(op)' in filter '\(raw)'; use ==, !=, <, <=, >, >= or a name such as EQUALS, LESS_THAN, BEGINS_WITH, IN, LIST_CONTAINS, NEAR")
        }
        var value = String(trimmingWhitespace(rest.dropFirst(op.count)))
        guard !value.isEmpty else { throw SyntaxError(message: form) }
        try refuseCompound(value, raw: raw)
        if SystemField.named(field) == nil { try Names.validateFieldName(field) }
        var distance: Double?
        if c == .near {
            let np = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard np.count == 2, let d = parseDistance(np[1]) else {
                throw SyntaxError(message: "NEAR needs 'lat,lon RADIUS' (RADIUS like 500m or 5km) in filter '\(raw)'")
            }
            value = np[0]
            distance = d
        }
        let pieces = c.takesListValue && !value.hasPrefix("[") ? listItems(value) : [value]
        for p in pieces where p.hasPrefix("\"") { _ = try unquote(p, raw: raw) }
        return FilterSyntax(raw: raw, field: field, comparator: c, value: value, distance: distance)
    }

    /// NSPredicate's operators a CloudKit developer reaches for, and what says it here.
    static let nsPredicateOperators: [String: String] = [
        "BEGINSWITH": "write BEGINS_WITH", "ENDSWITH": "CloudKit has no ENDSWITH (only BEGINS_WITH)",
        "CONTAINS": "write LIST_CONTAINS (a list field) or CONTAINS_ALL_TOKENS (words of a string)",
        "LIKE": "CloudKit has no LIKE; BEGINS_WITH or CONTAINS_ALL_TOKENS", "MATCHES": "CloudKit has no MATCHES; BEGINS_WITH or CONTAINS_ALL_TOKENS",
        "BETWEEN": "write two filters, 'FIELD >= LOW' and 'FIELD <= HIGH'", "NOTIN": "write NOT_IN",
    ]

    /// NSPredicate's `a > 1 AND b == 2` in one filter: ck takes one comparison per --filter and
    /// ANDs them, as a CKQuery's predicate does; CloudKit has no OR. Refused with the split
    /// spelled out, when what follows the AND (or OR) is itself a comparison; a quoted value,
    /// or a string that only contains the word, is left alone.
    static func refuseCompound(_ value: String, raw: String) throws {
        guard !value.hasPrefix("\"") && !value.hasPrefix("[") else { return }
        let words = value.split(separator: " ", omittingEmptySubsequences: true)
        for (i, w) in words.enumerated() where i > 0 && i + 1 < words.count {
            let joiner = w.uppercased()
            guard ["AND", "&&", "OR", "||"].contains(joiner) else { continue }
            let tail = words[(i + 1)...].joined(separator: " ")
            guard (try? scan(tail)) != nil else { continue }
            let head = raw.range(of: " " + w + " ").map { String(raw[..<$0.lowerBound]) } ?? raw
            if joiner == "AND" || joiner == "&&" {
                throw SyntaxError(message: "filter '\(raw)' holds two comparisons; give each its own --filter, which ck ANDs as CloudKit does: --filter '\(trimmingWhitespace(head[...]))' --filter '\(tail)'")
            }
            throw SyntaxError(message: "filter '\(raw)': CloudKit queries have no OR; run one query per alternative ('\(trimmingWhitespace(head[...]))', then '\(tail)')")
        }
    }

    /// `s` without the spaces and tabs at its ends: what Foundation's `.whitespaces` trims (tab
    /// and Unicode's space separators), without Foundation's string bridging on the way of
    /// every query process.
    static func trimmingWhitespace(_ s: Substring) -> Substring {
        func blank(_ u: Unicode.Scalar) -> Bool { u == "\t" || u.properties.generalCategory == .spaceSeparator }
        let scalars = s.unicodeScalars
        guard let first = scalars.firstIndex(where: { !blank($0) }), let last = scalars.lastIndex(where: { !blank($0) }) else { return "" }
        return Substring(scalars[first...last])
    }

    /// A double-quoted value, read as a JSON string: `\"` is a quote, `\\` a backslash.
    static func unquote(_ text: String, raw: String) throws -> String {
        guard let j = try? JSONParser.parse(text), let s = j.stringValue else {
            throw SyntaxError(message: "filter '\(raw)': the quoted value \(text) is not closed or has a bad escape (inside quotes write \\\" for a quote and \\\\ for a backslash)")
        }
        return s
    }

    /// Splits a list value on the commas outside double quotes.
    static func listItems(_ s: String) -> [String] {
        var items: [String] = []
        var cur = ""
        var quoted = false, escaped = false
        for ch in s {
            if quoted {
                cur.append(ch)
                if escaped { escaped = false } else if ch == "\\" { escaped = true } else if ch == "\"" { quoted = false }
            } else if ch == "," {
                items.append(cur)
                cur = ""
            } else {
                if ch == "\"" { quoted = true }
                cur.append(ch)
            }
        }
        items.append(cur)
        return items.map { String(trimmingWhitespace($0[...])) }
    }

    /// Reads the value: a quoted value is text, `TYPE:value` is explicit, anything else takes
    /// the field's type (`known`), else is inferred as a field argument is.
    public static func read(_ s: FilterSyntax, known: FieldTypeHint?, timeZone: @escaping @Sendable () -> TimeZone) throws -> QueryFilter {
        let raw = s.raw, field = s.field, c = s.comparator
        let fieldText = FieldText(timeZone: timeZone)
        let textOnly: Set<QueryComparator> = [.beginsWith, .notBeginsWith, .listMemberBeginsWith, .notListMemberBeginsWith, .containsAllTokens, .containsAnyTokens]
        // The type the value must have, when the field's type says.
        var element = known?.type.element
        if let k = known {
            if textOnly.contains(c) && k.type.base != .string {
                throw CloudKitError.badRequest("filter '\(raw)': \(c.rawValue) needs a STRING field, but '\(field)' is \(k.type)\(k.origin)")
            }
            if c == .near && k.type.base != .location {
                throw CloudKitError.badRequest("filter '\(raw)': NEAR needs a LOCATION field, but '\(field)' is \(k.type)\(k.origin)")
            }
        } else if textOnly.contains(c) {
            element = FieldType(.string)
        } else if c == .near {
            element = FieldType(.location)
        }
        func convert(_ value: String, _ t: FieldType, origin: String) throws -> JSONValue {
            do { return try fieldText.value(value, type: t, name: field, origin: origin) } catch let e as CloudKitError {
                throw CloudKitError.badRequest("filter '\(raw)': \(e.reason)")
            }
        }
        func scalar(_ item: String) throws -> RecordField {
            var text = item
            var quoted = false
            if text.hasPrefix("\"") {
                text = try unquote(text, raw: raw)
                quoted = true
            } else if let colon = text.firstIndex(of: ":"), let t = FieldType(tag: String(text[..<colon])), !t.isList, t.base != .asset, t.base != .unknown {
                return RecordField(type: t, value: try convert(String(text[text.index(after: colon)...]), t, origin: ""))
            }
            let t = element ?? (quoted ? FieldType(.string) : FieldText.infer(text))
            return RecordField(type: t, value: try convert(text, t, origin: element != nil ? known?.origin ?? "" : ""))
        }
        let valueText = s.value
        let value: RecordField
        if c.takesListValue {
            var items: [RecordField]
            if valueText.hasPrefix("[") {
                let j: JSONValue
                do { j = try JSONParser.parse(valueText) } catch { throw CloudKitError.badRequest("filter '\(raw)': list is not valid JSON: \(error)") }
                guard let a = j.arrayValue, !a.isEmpty else { throw CloudKitError.badRequest("filter '\(raw)': expected a non-empty JSON array") }
                items = try a.map { e in
                    if let str = e.stringValue {
                        let t = element ?? FieldType(.string)
                        return RecordField(type: t, value: try convert(str, t, origin: known?.origin ?? ""))
                    }
                    if let t = element {
                        do { return RecordField(type: t, value: try RecordField.canonical(name: field, type: t, value: e)) } catch let err as CloudKitError {
                            throw CloudKitError.badRequest("filter '\(raw)': \(err.reason)\(known?.origin ?? "")")
                        }
                    }
                    guard let f = try RecordField.parse(name: field, json: ["value": e]) else { throw CloudKitError.badRequest("filter '\(raw)': null in list") }
                    return f
                }
            } else {
                items = try listItems(valueText).map(scalar)
            }
            guard let first = items.first else { throw CloudKitError.badRequest("filter '\(raw)': empty list") }
            value = RecordField(type: FieldType(first.type.base, list: true), value: .array(items.map(\.value)))
        } else {
            value = try scalar(valueText)
        }
        let f = QueryFilter(fieldName: field, comparator: c, value: value, distance: s.distance)
        try f.validate()
        return f
    }

    static func parseDistance(_ s: String) -> Double? {
        let l = s.lowercased()
        if l.hasSuffix("km"), let v = FieldText.decimal(String(l.dropLast(2))), v >= 0 { return v * 1000 }
        if l.hasSuffix("m"), let v = FieldText.decimal(String(l.dropLast(1))), v >= 0 { return v }
        if let v = FieldText.decimal(l), v >= 0 { return v }
        return nil
    }
}

extension QueryComparator {
    public var takesListValue: Bool {
        switch self {
        case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll: return true
        default: return false
        }
    }
}

extension CloudKitAPI {
    /// Filters read with the types their fields have: a system field's, else the schema's for
    /// `recordType` (fieldTypeHints); dates without an offset in `timeZone`.
    public func typedFilters(_ syntax: [FilterSyntax], recordType: String, zoneName: String, timeZone: @escaping @Sendable () -> TimeZone,
                             as caller: Caller) throws -> [QueryFilter] {
        guard !syntax.isEmpty else { return [] }
        let hints = try fieldTypeHints(FieldTypeHintsRequest(recordType: recordType, fieldNames: syntax.map(\.field), zoneName: zoneName, forFilters: true), as: caller)
        return try syntax.map { try QueryFilterText.read($0, known: hints[$0.field], timeZone: timeZone) }
    }
}
