import CKJSON
import CKModel
import CKStore

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

extension CloudKitAPI {
    /// The caller's environment's schema as JSON (ck's own shape; CloudKit documents none):
    /// `{roles: [name], recordTypes: [{name, fields: [{name, type, queryable, searchable,
    /// sortable}], grants: {role: [permission]}}]}` — the types, fields and grants in the
    /// order the text export gives them (system fields first; Users last). NDJSON: a type a line.
    public func exportSchemaJSON(as caller: Caller) throws -> DocumentBody {
        let s = try schemaAdmin(caller).store(caller.environment).load()
        let names = s.types.keys.filter { $0 != "Users" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } + (s.types["Users"] == nil ? [] : ["Users"])
        let types: [JSONValue] = names.map { name in
            let t = s.types[name]!
            let fields: [JSONValue] = (t.systemFieldList + t.userFields).map { f in
                ["name": .string(f.name), "type": .string(f.type.description), "queryable": .bool(f.queryable),
                 "searchable": .bool(f.searchable), "sortable": .bool(f.sortable)]
            }
            let grants = t.grants.filter { !$0.value.isEmpty }.mapValues { ps in JSONValue.array(ps.map(\.rawValue).sorted().map(JSONValue.string)) }
            return ["name": .string(name), "fields": .array(fields), "grants": .object(grants)]
        }
        return DocumentBody(["roles": .array(s.roles.sorted().map(JSONValue.string)), "recordTypes": .array(types)], listKey: "recordTypes")
    }
}

/// A schema as text (`.ckdb`); as JSON, `{schema: text}`.
public struct SchemaExportResponse: ResponseBody {
    /// The schema language text, ending in a newline.
    public let text: String

    public var members: [String: JSONValue] { ["schema": .string(text)] }
}
