import CKJSON
import CKModel
import CKStore

extension CloudKitAPI {
    /// The custom roles of the caller's environment's schema with their members (user record
    /// names): `{roles: [{role, members}]}`, roles in order.
    public func roles(as caller: Caller) throws -> DocumentBody {
        let admin = try schemaAdmin(caller)
        let members = try admin.roleMembers(caller.environment)
        let roles = try admin.store(caller.environment).load().roles.sorted()
        return DocumentBody(["roles": .array(roles.map { ["role": .string($0), "members": .array((members[$0] ?? []).map(JSONValue.string))] })],
                            listKey: "roles")
    }
}
