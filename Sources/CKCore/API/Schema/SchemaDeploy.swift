import CKJSON
import CKModel
import CKStore

extension CloudKitAPI {
    /// Promotes the container's development schema to production — record types, fields,
    /// indexes, GRANTs, roles — additively: if development lacks or retypes anything production
    /// has, nothing is deployed (BAD_REQUEST). Answers `{deployed, recordTypesAdded,
    /// fieldsAdded}` (fields as `Type.field`). `dryRun`: the same answer with `deployed:
    /// false` and nothing written — what a deploy would do, for a confirmation.
    public func deploySchema(as caller: Caller, dryRun: Bool = false) throws -> DocumentBody {
        let r = try schemaAdmin(caller).deploy(dryRun: dryRun)
        return DocumentBody(["deployed": .bool(!dryRun), "recordTypesAdded": .array(r.typesAdded.map(JSONValue.string)),
                             "fieldsAdded": .array(r.fieldsAdded.map(JSONValue.string))])
    }
}
