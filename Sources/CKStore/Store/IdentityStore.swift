import CKJSON
import CKModel
import Foundation

/// User identities and the per-container `userDiscoverability` permission (CKUserIdentity,
/// CKContainer.ApplicationPermissions).
package struct IdentityStore {
    package enum PermissionStatus: String, Sendable {
        case initialState, couldNotComplete, denied, granted
    }

    /// Who a discovery names (API/Users: `UserLookup`).
    package typealias Lookup = UserLookup

    package let paths: DataPaths
    package let accounts: AccountStore

    package init(paths: DataPaths, accounts: AccountStore) {
        self.paths = paths
        self.accounts = accounts
    }

    func permissionFile(container: String, user: UserAccount) -> String {
        paths.container(container) + "/users/" + PathEncoding.component(user.userRecordName) + ".json"
    }

    package func discoverability(container: String, user: UserAccount) throws -> PermissionStatus {
        try Names.validateContainerID(container)
        guard let s = try FileSystem.readJSON(permissionFile(container: container, user: user))?["userDiscoverability"]?.stringValue else {
            return .initialState
        }
        return PermissionStatus(rawValue: s) ?? .initialState
    }

    /// Records the user's answer to the discoverability prompt for this container. The prompt
    /// is shown once: once answered, a request returns that answer and changes nothing.
    package func setDiscoverability(container: String, user: UserAccount, granted: Bool) throws -> PermissionStatus {
        try Names.validateContainerID(container)
        let answered = try discoverability(container: container, user: user)
        if answered == .granted || answered == .denied { return answered }
        let status: PermissionStatus = granted ? .granted : .denied
        let f = permissionFile(container: container, user: user)
        try FileSystem.makeDirectories((f as NSString).deletingLastPathComponent)
        try FileSystem.writeJSON(f, ["schemaVersion": .int(FileFormat.schemaVersion), "userRecordName": .string(user.userRecordName),
                                     "userDiscoverability": .string(status.rawValue)])
        return status
    }

    /// The Web Services User Identity dictionary; name components only when discoverable.
    package func identity(of user: UserAccount, container: String) throws -> JSONValue {
        var lookup: [String: JSONValue] = ["emailAddress": .string(user.appleID)]
        if let p = user.phoneNumber { lookup["phoneNumber"] = .string(p) }
        var o: [String: JSONValue] = ["userRecordName": .string(user.userRecordName), "lookupInfo": .object(lookup)]
        if try discoverability(container: container, user: user) == .granted {
            var names: [String: JSONValue] = [:]
            if let g = user.givenName { names["givenName"] = .string(g) }
            if let f = user.familyName { names["familyName"] = .string(f) }
            if !names.isEmpty { o["nameComponents"] = .object(names) }
        }
        return .object(o)
    }

    /// Finds another user's identity, only if that user made themselves discoverable in this
    /// container; otherwise NOT_FOUND, without saying whether the user exists.
    package func discover(_ lookup: Lookup, container: String) throws -> JSONValue {
        var found: UserAccount?
        let shown: String
        switch lookup {
        case .email(let e):
            try Validation.appleID(e)
            found = try accounts.user(appleID: e)
            shown = e
        case .phone(let p):
            try Validation.phoneNumber(p)
            let want = p.filter(\.isNumber)
            found = try accounts.allUsers().first { $0.phoneNumber?.filter(\.isNumber) == want }
            shown = p
        case .recordName(let r):
            guard Identifiers.isUserRecordName(r) else {
                throw CloudKitError.badRequest("'\(r)' is not a user record name (expected _ followed by 32 hex digits)")
            }
            found = try accounts.user(recordName: r)
            shown = r
        }
        guard let u = found, try discoverability(container: container, user: u) == .granted else {
            throw CloudKitError(.notFound, "no discoverable user matches '\(shown)' in \(container)")
        }
        return try identity(of: u, container: container)
    }
}
