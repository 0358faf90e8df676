import CKJSON
import CKModel
import CKStore

/// `users/lookup/email` and `users/lookup/id` (reference §3.6): User dictionaries
/// `{userRecordName, firstName, lastName}` (by email also `emailAddress`), one per user asked
/// for, in order; the names are null unless the user is discoverable in this container. A user
/// this data directory does not know is NOT_FOUND.
public struct UsersLookupEmailRequest: Sendable {
    public var emailAddresses: [String]

    public init(emailAddresses: [String]) {
        self.emailAddresses = emailAddresses
    }

    /// The body: `{users: [{emailAddress}]}`.
    public init(json body: JSONValue) throws {
        emailAddresses = try UsersLookupEmailRequest.values(body, "users/lookup/email request", key: "emailAddress")
        for e in emailAddresses { try Validation.appleID(e) }
    }

    /// The strings under `key` of `{users: [{key}]}`.
    static func values(_ body: JSONValue, _ what: String, key: String) throws -> [String] {
        let o = try RequestBody.object(body, what, keys: ["users"])
        return try RequestBody.array(o["users"], "users").enumerated().map { i, item in
            let u = try RequestBody.object(item, "users[\(i)]", keys: [key])
            guard let v = try RequestBody.string(u[key], "users[\(i)].\(key)") else { throw CloudKitError.badRequest("users[\(i)] needs a '\(key)' string") }
            return v
        }
    }
}

public struct UsersLookupIDRequest: Sendable {
    public var userRecordNames: [String]

    public init(userRecordNames: [String]) {
        self.userRecordNames = userRecordNames
    }

    /// The body: `{users: [{userRecordName}]}`.
    public init(json body: JSONValue) throws {
        userRecordNames = try UsersLookupEmailRequest.values(body, "users/lookup/id request", key: "userRecordName")
        for n in userRecordNames { try UserLookup.recordName(n).validate() }
    }
}

extension CloudKitAPI {
    public func lookupUsersByEmail(_ r: UsersLookupEmailRequest, as caller: Caller) throws -> ItemsResponse {
        for e in r.emailAddresses { try Validation.appleID(e) }
        let ctx = try preflight(.usersLookupEmail, caller.inDatabase(.public), need: .none)
        _ = try ctx.principal.requireUser(for: "looking up users")
        return ItemsResponse("users", try r.emailAddresses.map { e in
            guard let u = try store.accounts.user(appleID: e) else {
                return .failed(CloudKitError(.notFound, "no iCloud user has the email address '\(Names.describe(e))'"))
            }
            return .value(try userDictionary(u, container: caller.container, email: e))
        }, for: ctx.audience)
    }

    public func lookupUsersByID(_ r: UsersLookupIDRequest, as caller: Caller) throws -> ItemsResponse {
        for n in r.userRecordNames { try UserLookup.recordName(n).validate() }
        let ctx = try preflight(.usersLookupID, caller.inDatabase(.public), need: .none)
        _ = try ctx.principal.requireUser(for: "looking up users")
        return ItemsResponse("users", try r.userRecordNames.map { n in
            guard let u = try store.accounts.user(recordName: n) else {
                return .failed(CloudKitError(.notFound, "no iCloud user has the user record name '\(Names.describe(n))'"))
            }
            return .value(try userDictionary(u, container: caller.container, email: nil))
        }, for: ctx.audience)
    }

    /// The User dictionary: names null unless the user is discoverable here.
    private func userDictionary(_ u: UserAccount, container: String, email: String?) throws -> JSONValue {
        let shown = try store.identities.discoverability(container: container, user: u) == .granted
        var o: [String: JSONValue] = [
            "userRecordName": .string(u.userRecordName),
            "firstName": shown ? u.givenName.map(JSONValue.string) ?? .null : .null,
            "lastName": shown ? u.familyName.map(JSONValue.string) ?? .null : .null,
        ]
        if let e = email { o["emailAddress"] = .string(e) }
        return .object(o)
    }
}
