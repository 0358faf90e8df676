import CKCore

extension CloudKitAPI {
    /// Adds record type `type` to the development schema of `container` with the `"___recordID"
    /// REFERENCE QUERYABLE` index a query without a filter needs — in development as in
    /// production, as CloudKit has it — as an app's schema has it before its first query.
    /// (A type that exists already gets its indexes with `addSchemaIndexes`.)
    public func defineQueryableType(_ type: String, container: String) throws {
        let caller = Caller(container: container)
        let text = try exportSchema(as: caller).text + "\n    RECORD TYPE \(type) (\"___recordID\" REFERENCE QUERYABLE);\n"
        _ = try importSchema(SchemaImportRequest(text: text), as: caller)
    }
}
