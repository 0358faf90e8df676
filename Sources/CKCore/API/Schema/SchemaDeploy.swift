import CKJSON
import CKModel
import CKStore

extension CloudKitAPI {
    /// Promotes the container's development schema to production — record types, fields,
    /// indexes, GRANTs, roles — additively: if development lacks or retypes anything production
    /// has, nothing is deployed (BAD_REQUEST). Answers `{deployed, recordTypesAdded,
    /// fieldsAdded}` (fields as `Type.field`).
    public func deploySchema(as caller: Caller) throws -> DocumentBody {
        let r = try schemaAdmin(caller).deploy()
        return DocumentBody(["deployed": true, "recordTypesAdded": .array(r.typesAdded.map(JSONValue.string)),
                             "fieldsAdded": .array(r.fieldsAdded.map(JSONValue.string))])
    }
}
