/// A Web Services field type tag: a base type, or a list of one (`STRING_LIST`).
public struct FieldType: Hashable, Sendable, CustomStringConvertible {
    public enum Base: String, Sendable, CaseIterable {
        case string = "STRING"
        case int64 = "INT64"
        case double = "DOUBLE"
        case timestamp = "TIMESTAMP"
        case bytes = "BYTES"
        /// Ciphertext of a field the client encrypts (every Photos, Notes and Reminders record
        /// has some): base64, stored, returned and queried like BYTES; schema `ENCRYPTED BYTES`.
        case encryptedBytes = "ENCRYPTED_BYTES"
        case reference = "REFERENCE"
        case location = "LOCATION"
        /// Assets are tagged `ASSETID` in responses, as the service sends them (reference §1.2).
        case asset = "ASSETID"
        /// Only for empty lists whose element type is unknown.
        case unknown = "UNKNOWN"
    }

    public var base: Base
    public var isList: Bool

    public init(_ base: Base, list: Bool = false) {
        self.base = base
        self.isList = list
    }

    public var rawValue: String { isList ? base.rawValue + "_LIST" : base.rawValue }
    public var description: String { rawValue }
    public var element: FieldType { FieldType(base) }

    /// Parses a tag, accepting `ASSET` for `ASSETID`, the schema spelling `LIST<T>`, and
    /// cktool's `stringType`-style names.
    public init?(tag raw: String) {
        var s = raw
        if let c = FieldType.cktoolNames[s] { s = c }
        var list = false
        if s.hasSuffix("_LIST") { list = true; s.removeLast(5) }
        else if s.hasPrefix("LIST<") && s.hasSuffix(">") { list = true; s = String(s.dropFirst(5).dropLast()) }
        if s == "ASSET" { s = "ASSETID" }
        guard let b = Base(rawValue: s) else { return nil }
        if b == .unknown && !list { return nil }
        self.init(b, list: list)
    }

    package static let cktoolNames: [String: String] = [
        "stringType": "STRING", "int64Type": "INT64", "doubleType": "DOUBLE", "timestampType": "TIMESTAMP",
        "bytesType": "BYTES", "referenceType": "REFERENCE", "locationType": "LOCATION", "assetType": "ASSETID",
        "stringListType": "STRING_LIST", "int64ListType": "INT64_LIST", "doubleListType": "DOUBLE_LIST",
        "timestampListType": "TIMESTAMP_LIST", "bytesListType": "BYTES_LIST", "referenceListType": "REFERENCE_LIST",
        "locationListType": "LOCATION_LIST", "assetListType": "ASSETID_LIST",
    ]

    /// Every tag a field may carry, for help and error messages.
    public static var allTags: [String] {
        Base.allCases.filter { $0 != .unknown }.flatMap { [$0.rawValue, $0.rawValue + "_LIST"] }
    }
}
