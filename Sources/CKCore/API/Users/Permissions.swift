import CKModel
import CKStore

/// The `userDiscoverability` permission of a container (native `requestApplicationPermission`,
/// `CKContainer.ApplicationPermissions`): the user's answer to the discoverability prompt, and
/// its status (initialState, never asked; denied; granted). ck's own entries: no endpoint.
public struct PermissionRequest: Sendable {
    /// The user's answer: granted, or denied.
    public var granted: Bool

    public init(granted: Bool) {
        self.granted = granted
    }
}

extension CloudKitAPI {
    /// `{permission: "userDiscoverability", status}`.
    public func requestPermission(_ r: PermissionRequest, as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(nil, caller, need: .none)
        let user = try ctx.principal.requireUser(for: "requesting a permission")
        let st = try store.identities.setDiscoverability(container: caller.container, user: user, granted: r.granted)
        return DocumentBody(["permission": "userDiscoverability", "status": .string(st.rawValue)])
    }

    public func permissionStatus(as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(nil, caller, need: .none)
        let user = try ctx.principal.requireUser(for: "reading a permission")
        let st = try store.identities.discoverability(container: caller.container, user: user)
        return DocumentBody(["permission": "userDiscoverability", "status": .string(st.rawValue)])
    }
}
