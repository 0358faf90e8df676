import CKCore

/// `ck schema export|import|index add|deploy|reset` and `ck role assign|remove|list`: the developer's
/// view of the schema, as the CloudKit console and cktool give it.
enum SchemaCommands {
    static var all: [Command] { [export, importSchema, indexAdd, deploy, reset, roleAssign, roleRemove, roleList] }

    /// `ROLE APPLE-ID` of `role assign|remove`.
    static func roleRequest(_ inv: Invocation, member: Bool) throws -> RoleRequest {
        let p = try inv.positionals(min: 2, max: 2, what: "ROLE and APPLE-ID")
        return RoleRequest(role: p[0], appleID: p[1], member: member)
    }
}
