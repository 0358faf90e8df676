import CKCore

/// `ck permission request|status`: the userDiscoverability permission of a container.
enum PermissionCommands {
    static func permissionName(_ inv: Invocation) throws -> String {
        let p = try inv.positionals(min: 1, max: 1, what: "permission name (userDiscoverability)")[0]
        guard p == "userDiscoverability" else { throw inv.usageError("unknown permission '\(p)'; CloudKit has one: userDiscoverability") }
        return p
    }
}
