import CKJSON
import CKModel
import CKStore

extension CloudKitAPI {
    /// Promotes the container's development schema to production — record types, fields,
    /// indexes, GRANTs, roles — additively: if development lacks or retypes anything production
    /// has, nothing is deployed (BAD_REQUEST). Answers `{deployed, recordTypesAdded,
    /// fieldsAdded}` (fields as `Type.field`). `dryRun`: the same answer with `deployed:
    /// false` and nothing written — what a deploy would do, for a confirmation.
    /// `ifDevelopment`: the `development` fingerprint a preview answered; the deploy is refused
    /// (CONFLICT) if the development schema changed since.
    public func deploySchema(as caller: Caller, dryRun: Bool = false, ifDevelopment: String? = nil) throws -> DeployedSchema {
        let r = try schemaAdmin(caller).deploy(dryRun: dryRun, ifDevelopment: ifDevelopment)
        return DeployedSchema(document: ["deployed": .bool(!dryRun), "recordTypesAdded": .array(r.typesAdded.map(JSONValue.string)),
                                         "fieldsAdded": .array(r.fieldsAdded.map(JSONValue.string))], development: r.development)
    }
}

/// `{deployed, recordTypesAdded, fieldsAdded}`, and the development schema's fingerprint, which
/// the console's confirmation names (the CLI deploys at once and prints no fingerprint).
public struct DeployedSchema: ResponseBody {
    let document: [String: JSONValue]
    public let development: String

    public var listKey: String? { nil }
    public var items: [any JSONEncodable] { [] }
    public var members: [String: JSONValue] { document }
}
