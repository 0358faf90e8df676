/// The system fields every record has, by the name a Web Services query uses and the name the
/// schema language gives them: the one table of them. Queries filter and sort on them, the
/// query indexes keep runs of them, the schema's indexes on them decide what production
/// answers, and untyped filter values take their types.
public enum SystemField: String, CaseIterable, Sendable {
    case recordName, createdTimestamp, modifiedTimestamp, createdUserRecordName, modifiedUserRecordName, parent, share

    /// The name in the schema language (`.ckdb`), where the type's indexes on it are declared.
    public var schemaName: String {
        switch self {
        case .recordName: return "___recordID"
        case .createdTimestamp: return "___createTime"
        case .modifiedTimestamp: return "___modTime"
        case .createdUserRecordName: return "___createdBy"
        case .modifiedUserRecordName: return "___modifiedBy"
        case .parent: return "___parent"
        case .share: return "___share"
        }
    }

    /// A system field by its query name or its schema name (`___recordId` too, as sent by
    /// some clients).
    public static func named(_ name: String) -> SystemField? {
        if let f = SystemField(rawValue: name) { return f }
        if name == "___recordId" { return .recordName }
        return allCases.first { $0.schemaName == name }
    }

    /// The type its values have (in a filter, a sort, an index).
    public var type: FieldType {
        switch self {
        case .createdTimestamp, .modifiedTimestamp: return FieldType(.timestamp)
        default: return FieldType(.reference)
        }
    }

    /// The index run a query on it reads: nil for record names (the type's names run), "" for
    /// none (parent and share are not indexed), else the run's field name.
    package var runField: String? {
        switch self {
        case .recordName: return nil
        case .parent, .share: return ""
        default: return rawValue
        }
    }

    /// Its value in a record, as a query compares it.
    package func value(of r: Record) -> RecordField? {
        func ref(_ n: String) -> RecordField { RecordField(type: FieldType(.reference), value: ["recordName": .string(n), "action": "NONE"]) }
        switch self {
        case .recordName: return ref(r.recordName)
        case .createdTimestamp: return RecordField(type: FieldType(.timestamp), value: .int(r.created.timestamp))
        case .modifiedTimestamp: return RecordField(type: FieldType(.timestamp), value: .int(r.modified.timestamp))
        case .createdUserRecordName: return ref(r.created.userRecordName)
        case .modifiedUserRecordName: return ref(r.modified.userRecordName)
        case .parent: return r.parent.map(ref)
        case .share: return nil
        }
    }

    package var kind: ValueKind { type.base == .timestamp ? .number : .reference }
}
