import CKCore
import CKModel

extension SchemaCommands {
    static let indexAdd: CommandSpec = CommandSpec(synopsis: "TYPE FIELD QUERYABLE|SORTABLE|SEARCHABLE…",
        summary: "Add indexes to a field of the development schema",
        details: """
        What the CloudKit console does when a field is ticked QUERYABLE, SORTABLE or
        SEARCHABLE, without exporting and importing the schema: the field keeps the indexes it
        has and gains these. FIELD is a field of TYPE, or a system field by its schema name
        ("___recordID", "___createTime", "___modTime", "___createdBy", "___modifiedBy") or its
        query name (recordName, createdTimestamp, …). A query without a filter needs
        'ck schema index add TYPE ___recordID QUERYABLE'. Bytes, assets and encrypted fields
        take no index, a list is never SORTABLE, and only STRING fields are SEARCHABLE
        (BAD_REQUEST, exit 6, nothing changed). Development only (--env production is refused):
        'ck schema deploy' takes the indexes to production. Prints {recordType, field, type,
        queryable, searchable, sortable, added, ckdb}.
        """) { inv in
        let p = try inv.positionals(min: 3, what: "TYPE, FIELD and at least one index")
        try Names.validateRecordType(p[0])
        let indexes = try p.dropFirst(2).map { word -> SchemaIndex in
            guard let i = SchemaIndex(rawValue: word.uppercased()) else {
                throw inv.usageError("'\(word)' is no index; name QUERYABLE, SORTABLE or SEARCHABLE")
            }
            return i
        }
        inv.print(try inv.api.addSchemaIndexes(SchemaIndexRequest(recordType: p[0], fieldName: p[1], indexes: indexes), as: try inv.caller()))
        return ExitCode.success
    }
}
