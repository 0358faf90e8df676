/// The developer's side of the schema, operations of ck's own as the CloudKit console and
/// cktool give them: export, import, deploy, reset, and the users of custom roles. They act on
/// the caller's container (and, where it matters, environment); no account is needed, and no
/// fault fails them.
extension CloudKitAPI {
    /// The schema admin of the caller's container.
    func schemaAdmin(_ caller: Caller) throws -> SchemaAdmin {
        try Names.validateContainerID(caller.container)
        return SchemaAdmin(paths: store.paths, container: caller.container)
    }

    /// The caller's environment's schema in the CloudKit schema language, as `cktool
    /// export-schema` prints it: DEFINE SCHEMA, the roles, each record type with its six
    /// system fields (quoted), its fields and index options and its GRANTs; Users last.
    public func exportSchema(as caller: Caller) throws -> SchemaExportResponse {
        SchemaExportResponse(text: SchemaPrinter.print(try schemaAdmin(caller).store(caller.environment).load()))
    }
}

/// A schema as text (`.ckdb`); as JSON, `{schema: text}`.
public struct SchemaExportResponse: ResponseBody {
    /// The schema language text, ending in a newline.
    public let text: String

    public var members: [String: JSONValue] { ["schema": .string(text)] }
}
