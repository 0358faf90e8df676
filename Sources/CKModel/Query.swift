import CKCrypto
import CKJSON

/// Web Services query comparators (reference §1.4), with CKTool's list aliases.
public enum QueryComparator: String, Sendable, CaseIterable {
    case equals = "EQUALS", notEquals = "NOT_EQUALS"
    case lessThan = "LESS_THAN", lessThanOrEquals = "LESS_THAN_OR_EQUALS"
    case greaterThan = "GREATER_THAN", greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
    case near = "NEAR"
    case containsAllTokens = "CONTAINS_ALL_TOKENS", containsAnyTokens = "CONTAINS_ANY_TOKENS"
    case `in` = "IN", notIn = "NOT_IN"
    case listContains = "LIST_CONTAINS", notListContains = "NOT_LIST_CONTAINS"
    case listContainsAny = "LIST_CONTAINS_ANY", notListContainsAny = "NOT_LIST_CONTAINS_ANY"
    case listContainsAll = "LIST_CONTAINS_ALL", notListContainsAll = "NOT_LIST_CONTAINS_ALL"
    case beginsWith = "BEGINS_WITH", notBeginsWith = "NOT_BEGINS_WITH"
    case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH", notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"

    /// Accepts the Web Services names, CKTool's aliases and the shorthand operators.
    public init?(name: String) {
        let aliases: [String: QueryComparator] = [
            "==": .equals, "=": .equals, "!=": .notEquals, "<": .lessThan, "<=": .lessThanOrEquals,
            ">": .greaterThan, ">=": .greaterThanOrEquals,
            "LIST_NOT_CONTAINS": .notListContains, "LIST_NOT_CONTAINS_ANY": .notListContainsAny,
        ]
        if let a = aliases[name] { self = a; return }
        guard let c = QueryComparator(rawValue: name.uppercased()) else { return nil }
        self = c
    }

    /// Comparators whose right-hand side is a list of values.
    package var takesList: Bool {
        switch self {
        case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll: return true
        default: return false
        }
    }

    /// The index production needs for this comparator (issue: schema).
    public var needsSearchable: Bool { self == .containsAllTokens || self == .containsAnyTokens }
}

/// One `filterBy` entry.
public struct QueryFilter: Sendable, Equatable {
    public var fieldName: String
    public var comparator: QueryComparator
    public var value: RecordField
    /// Meters, for NEAR.
    public var distance: Double?

    public init(fieldName: String, comparator: QueryComparator, value: RecordField, distance: Double? = nil) {
        self.fieldName = fieldName
        self.comparator = comparator
        self.value = value
        self.distance = distance
    }

    package var json: JSONValue {
        var o: [String: JSONValue] = ["fieldName": .string(fieldName), "comparator": .string(comparator.rawValue), "fieldValue": value.json]
        if let d = distance { o["distance"] = .double(d) }
        return .object(o)
    }
}

/// One `sortBy` entry.
public struct QuerySort: Sendable, Equatable {
    public var fieldName: String
    public var ascending: Bool
    /// Sort by distance from this location (LOCATION fields).
    public var relativeLocation: JSONValue?

    public init(fieldName: String, ascending: Bool = true, relativeLocation: JSONValue? = nil) {
        self.fieldName = fieldName
        self.ascending = ascending
        self.relativeLocation = relativeLocation
    }

    package var json: JSONValue {
        var o: [String: JSONValue] = ["fieldName": .string(fieldName), "ascending": .bool(ascending)]
        if let r = relativeLocation { o["relativeLocation"] = r }
        return .object(o)
    }
}

/// A `records/query` request.
public struct QueryRequest: Sendable {
    public var recordType: String
    public var filters: [QueryFilter]
    public var sorts: [QuerySort]
    public var resultsLimit: Int
    public var continuationMarker: String?
    public var desiredKeys: Set<String>?

    public init(recordType: String, filters: [QueryFilter] = [], sorts: [QuerySort] = [], resultsLimit: Int = Limits.resultsPerPage,
                continuationMarker: String? = nil, desiredKeys: Set<String>? = nil) {
        self.recordType = recordType
        self.filters = filters
        self.sorts = sorts
        self.resultsLimit = resultsLimit
        self.continuationMarker = continuationMarker
        self.desiredKeys = desiredKeys
    }

    /// What a continuation marker is bound to: the same type, filters and sorts.
    package var fingerprint: String {
        let j: JSONValue = ["t": .string(recordType), "f": .array(filters.map(\.json)), "s": .array(sorts.map(\.json))]
        return String(SHA256.hex(Array(JSONWriter.compact(j).utf8)).prefix(16))
    }

    /// Parses a Web Services `records/query` body.
    public static func parse(_ body: JSONValue) throws -> (QueryRequest, zoneName: String?) {
        guard let o = body.objectValue else { throw CloudKitError.badRequest("query request must be a JSON object, got \(body.kindName)") }
        let known: Set<String> = ["query", "zoneID", "resultsLimit", "continuationMarker", "desiredKeys", "zoneWide", "numbersAsStrings"]
        for k in o.keys where !known.contains(k) { throw CloudKitError.badRequest("unknown key '\(k)' in query request") }
        guard let q = o["query"]?.objectValue else { throw CloudKitError.badRequest("query request needs a 'query' object") }
        for k in q.keys where !["recordType", "filterBy", "sortBy"].contains(k) { throw CloudKitError.badRequest("unknown key '\(k)' in query") }
        guard let type = q["recordType"]?.stringValue else { throw CloudKitError.badRequest("query needs a string 'recordType'") }
        try Names.validateRecordType(type)
        var req = QueryRequest(recordType: type)
        if let f = q["filterBy"], !f.isNull {
            guard let fa = f.arrayValue else { throw CloudKitError.badRequest("filterBy must be an array") }
            req.filters = try fa.map(parseFilter)
        }
        if let s = q["sortBy"], !s.isNull {
            guard let sa = s.arrayValue else { throw CloudKitError.badRequest("sortBy must be an array") }
            req.sorts = try sa.map(parseSort)
        }
        if let l = o["resultsLimit"], !l.isNull {
            guard let n = l.int64Value, n >= 1 else { throw CloudKitError.badRequest("resultsLimit must be a positive integer") }
            req.resultsLimit = Int(min(n, Int64(Limits.resultsPerPage)))
        }
        if let m = o["continuationMarker"], !m.isNull {
            guard let s = m.stringValue else { throw CloudKitError.badRequest("continuationMarker must be a string") }
            req.continuationMarker = s
        }
        if let d = o["desiredKeys"], !d.isNull {
            guard let a = d.arrayValue, a.allSatisfy({ $0.stringValue != nil }) else { throw CloudKitError.badRequest("desiredKeys must be an array of field names") }
            req.desiredKeys = Set(a.compactMap(\.stringValue))
        }
        var zone: String?
        if let z = o["zoneID"], !z.isNull { zone = try ZoneID(json: z).zoneName }
        return (req, zone)
    }

    package static func parseFieldName(_ o: [String: JSONValue]) throws -> String {
        if let s = o["systemFieldName"] {
            guard let n = s.stringValue, SystemField.named(n) != nil else { throw CloudKitError.badRequest("unknown systemFieldName \(JSONWriter.compact(s))") }
            return n
        }
        guard let n = o["fieldName"]?.stringValue else { throw CloudKitError.badRequest("filter or sort needs a 'fieldName'") }
        if SystemField.named(n) == nil { try Names.validateFieldName(n) }
        return n
    }

    package static func parseFilter(_ j: JSONValue) throws -> QueryFilter {
        guard let o = j.objectValue else { throw CloudKitError.badRequest("each filter must be an object") }
        for k in o.keys where !["comparator", "fieldName", "systemFieldName", "fieldValue", "distance"].contains(k) {
            throw CloudKitError.badRequest("unknown key '\(k)' in filter")
        }
        guard let cs = o["comparator"]?.stringValue, let c = QueryComparator(rawValue: cs) else {
            throw CloudKitError.badRequest("filter comparator must be one of \(QueryComparator.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let name = try parseFieldName(o)
        guard let fv = o["fieldValue"] else { throw CloudKitError.badRequest("filter on '\(name)' needs a 'fieldValue'") }
        guard let value = try RecordField.parse(name: name, json: fv) else { throw CloudKitError.badRequest("filter on '\(name)' has a null value") }
        var distance: Double?
        if let d = o["distance"], !d.isNull {
            guard let v = d.doubleValue, v >= 0 else { throw CloudKitError.badRequest("filter distance must be a non-negative number of meters") }
            distance = v
        }
        let f = QueryFilter(fieldName: name, comparator: c, value: value, distance: distance)
        try f.validate()
        return f
    }

    package static func parseSort(_ j: JSONValue) throws -> QuerySort {
        guard let o = j.objectValue else { throw CloudKitError.badRequest("each sort must be an object") }
        for k in o.keys where !["fieldName", "systemFieldName", "ascending", "relativeLocation"].contains(k) {
            throw CloudKitError.badRequest("unknown key '\(k)' in sort")
        }
        let name = try parseFieldName(o)
        var asc = true
        if let a = o["ascending"], !a.isNull {
            guard let b = a.boolValue else { throw CloudKitError.badRequest("sort 'ascending' must be true or false") }
            asc = b
        }
        var rel: JSONValue?
        if let r = o["relativeLocation"], !r.isNull {
            guard let f = try RecordField.parse(name: name, json: r), f.type == FieldType(.location) else {
                throw CloudKitError.badRequest("relativeLocation must be a LOCATION field value")
            }
            rel = f.value
        }
        return QuerySort(fieldName: name, ascending: asc, relativeLocation: rel)
    }
}

extension QueryFilter {
    /// Checks the value's shape against the comparator.
    public func validate() throws {
        if comparator.takesList && !value.type.isList {
            throw CloudKitError.badRequest("\(comparator.rawValue) on '\(fieldName)' needs a list value")
        }
        if comparator == .near {
            guard value.type == FieldType(.location) else { throw CloudKitError.badRequest("NEAR on '\(fieldName)' needs a LOCATION value") }
            guard distance != nil else { throw CloudKitError.badRequest("NEAR on '\(fieldName)' needs a distance") }
        }
        if (comparator == .containsAllTokens || comparator == .containsAnyTokens || comparator == .beginsWith
            || comparator == .notBeginsWith || comparator == .listMemberBeginsWith || comparator == .notListMemberBeginsWith)
            && value.type != FieldType(.string) {
            throw CloudKitError.badRequest("\(comparator.rawValue) on '\(fieldName)' needs a STRING value")
        }
    }
}

/// What a value compares as: CloudKit compares numbers with numbers (INT64, DOUBLE and
/// TIMESTAMP alike), text with text (a record name is text), and so on.
package enum ValueKind: String {
    case number, text, reference, location, bytes, asset

    package init?(_ t: FieldType) {
        switch t.base {
        case .string: self = .text
        case .int64, .double, .timestamp: self = .number
        case .bytes, .encryptedBytes: self = .bytes
        case .reference: self = .reference
        case .location: self = .location
        case .asset: self = .asset
        case .unknown: return nil
        }
    }

    package func compares(with other: ValueKind) -> Bool {
        self == other || Set([self, other]) == [.text, .reference]
    }
}
