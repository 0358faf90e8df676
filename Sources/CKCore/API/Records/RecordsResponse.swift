import CKJSON
import CKModel
import CKStore

/// `{records: [...]}` of records/lookup and records/modify: per item of the request, in order,
/// a record, a tombstone or an error dictionary — one result per operation, as clients match
/// results to operations by index (a DELETE_SELF cascade is in the history and the change
/// feeds, not in the answer). ck's `record delete` alone lists what its deletions removed
/// (`listsCascades`).
public struct RecordsResponse: ResponseBody {
    /// How items are shown: a lookup's records and tombstones carry their zoneID; a modify's
    /// carry none (no recorded modify response has one).
    public enum Shape: Sendable { case lookup, modify }

    public var results: [OperationResult]
    public let shape: Shape
    /// The fields the write defined just in time in the development schema (no part of the
    /// Web Services body): what a front end announces (`defined field 'done' as STRING`).
    public var definedFields: [DefinedField] = []
    /// After the results, a tombstone for each record the deletions removed through DELETE_SELF
    /// references: ck's `record delete` (a command for people), never a Web Services answer.
    var listsCascades = false
    let style: ResponseStyle
    let desiredKeys: Set<String>?
    /// By index: the options an operation or a lookup item gave for its own result.
    var itemOptions: [Int: ItemOptions] = [:]

    init(_ results: [OperationResult], shape: Shape, style: ResponseStyle, desiredKeys: Set<String>? = nil) {
        self.results = results
        self.shape = shape
        self.style = style
        self.desiredKeys = desiredKeys
    }

    /// The items that failed, in order.
    public var failures: [CloudKitError] { results.compactMap(\.error) }

    public var listKey: String? { "records" }
    public var members: [String: JSONValue] { [:] }

    public var items: [any JSONEncodable] {
        var out: [any JSONEncodable] = results.indices.map { item(results[$0], options: itemOptions[$0]) }
        guard listsCascades else { return out }
        for r in results { if case .deleted(_, _, let more) = r { out += more.map { Record.tombstone(recordName: $0, zoneID: nil) } } }
        return out
    }

    /// One item as Web Services shows it, with its own options over the request's.
    func item(_ r: OperationResult, options: ItemOptions? = nil) -> any JSONEncodable {
        let style = options?.numbersAsStrings.map { self.style.numbersAsStrings($0) } ?? self.style
        let desiredKeys = options?.desiredKeys ?? self.desiredKeys
        switch r {
        case .saved(let rec): return rec.encodableResponse(style, desiredKeys: desiredKeys, withZoneID: shape == .lookup)
        case .deleted(let n, let z, _): return Record.tombstone(recordName: n, zoneID: shape == .lookup ? z : nil)
        case .failed(let e):
            // A per-record error names its record, not its zone (Apple's Record Fetch Error dictionary).
            var shown = e
            if shown.recordName != nil { shown.zoneID = nil }
            return shown.envelope(style: style)
        }
    }
}

/// The options one operation of a records/modify, or one item of a records/lookup, gives for
/// its own result — CloudKit JS sends them inside the operation — over the request's: nil
/// leaves the request's.
public struct ItemOptions: Sendable, Equatable {
    public var desiredKeys: Set<String>?
    public var numbersAsStrings: Bool?

    public init(desiredKeys: Set<String>? = nil, numbersAsStrings: Bool? = nil) {
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    /// `desiredKeys` and `numbersAsStrings` of a dictionary that may carry them; nil when it
    /// carries neither.
    static func parse(_ o: [String: JSONValue]) throws -> ItemOptions? {
        var options = ItemOptions()
        options.desiredKeys = try RequestBody.desiredKeys(o["desiredKeys"])
        options.numbersAsStrings = try RequestBody.bool(o["numbersAsStrings"], "numbersAsStrings")
        return options == ItemOptions() ? nil : options
    }
}

/// A field a write defined just in time in the development schema (SPEC §4: the new field is
/// announced), with whether its record type was new too.
public struct DefinedField: Equatable, Sendable {
    public var recordType: String
    public var fieldName: String
    /// Its schema type as the schema language spells it (`STRING`, `LIST<INT64>`, …).
    public var type: String
    public var newRecordType: Bool

    /// The user fields of `defined` (SchemaRules' additions), by record type then field name
    /// (bytes). An addition carries grants only when it makes its type (the type's defaults);
    /// fields added to a known type come without.
    static func list(_ defined: Schema) -> [DefinedField] {
        defined.types.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.flatMap { name, t in
            t.userFields.map { DefinedField(recordType: name, fieldName: $0.name, type: $0.type.description, newRecordType: !t.grants.isEmpty) }
        }
    }
}
