import CKJSON
import CKModel
import CKStore

/// A schema in the CloudKit schema language (reference §8) to make the development schema,
/// or only to check (`validateOnly`): its grammar, and that nothing production has would be
/// lost or retyped.
public struct SchemaImportRequest: Sendable {
    public var text: String
    public var validateOnly: Bool

    public init(text: String, validateOnly: Bool = false) {
        self.text = text
        self.validateOnly = validateOnly
    }
}

extension CloudKitAPI {
    /// Imports a schema into development, replacing its schema whole. BAD_REQUEST, changing
    /// nothing, for a schema that does not parse (line:column), one that would remove or
    /// retype anything production has, or a caller in production: schemas are imported into
    /// development and reach production by `deploySchema` (as cktool's import is refused
    /// there). Answers `{valid, applied, recordTypes, roles}`.
    public func importSchema(_ r: SchemaImportRequest, as caller: Caller) throws -> DocumentBody {
        let admin = try schemaAdmin(caller)
        guard caller.environment == .development else {
            var e = CloudKitError.badRequest("schemas are imported into development, not \(caller.environment.rawValue); production gets the development schema when it is deployed")
            e.nextStep = .deploySchema
            throw e
        }
        let s = try admin.importSchema(r.text, validateOnly: r.validateOnly)
        return DocumentBody(["valid": true, "applied": .bool(!r.validateOnly), "recordTypes": .array(s.types.keys.sorted().map(JSONValue.string)),
                             "roles": .array(s.roles.sorted().map(JSONValue.string))])
    }
}
