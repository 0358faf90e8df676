import CKCore

/// `ck role assign|remove|list`: the custom security roles the schema defines (`CREATE ROLE`),
/// and who holds them (public database GRANTs).
enum RoleCommands {
    /// `ROLE APPLE-ID` of `role assign|remove`.
    static func roleRequest(_ inv: Invocation, member: Bool) throws -> RoleRequest {
        let p = try inv.positionals(min: 2, max: 2, what: "ROLE and APPLE-ID")
        return RoleRequest(role: p[0], appleID: p[1], member: member)
    }
}
