import CKModel
import CKStore

/// A user given a custom security role of the public database's GRANTs, or taken out of it.
public struct RoleRequest: Sendable {
    /// A role the schema of the caller's environment defines (CREATE ROLE).
    public var role: String
    /// The user, by the Apple ID they signed in with on this device.
    public var appleID: String
    /// true: give the role; false: take it.
    public var member: Bool

    public init(role: String, appleID: String, member: Bool) {
        self.role = role
        self.appleID = appleID
        self.member = member
    }
}

extension CloudKitAPI {
    /// Gives or takes a custom role in the caller's environment. NOT_FOUND for an Apple ID that
    /// never signed in here; BAD_REQUEST for a role the schema does not define. Answers
    /// `{role, userRecordName, member}`.
    public func setRole(_ r: RoleRequest, as caller: Caller) throws -> DocumentBody {
        let admin = try schemaAdmin(caller)
        guard let u = try store.accounts.user(appleID: r.appleID) else {
            throw CloudKitError(.notFound, "no user with Apple ID '\(Names.describe(r.appleID))' has signed in on this device")
        }
        try admin.setRole(r.role, user: u.userRecordName, member: r.member, caller.environment)
        return DocumentBody(["role": .string(r.role), "userRecordName": .string(u.userRecordName), "member": .bool(r.member)])
    }
}
