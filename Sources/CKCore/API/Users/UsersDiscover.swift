import CKJSON
import CKModel
import CKStore

/// `users/discover`: other users' identities, only of users who made themselves discoverable
/// in this container. GET: every such user (but the caller), by user record name. POST
/// `{lookupInfos: [{emailAddress | phoneNumber | userRecordName}]}`: one identity per user
/// found; a lookup that finds nobody adds nothing, which does not say whether such a user exists.
public struct UsersDiscoverRequest: Sendable {
    /// nil: every discoverable user (GET).
    public var lookups: [UserLookup]?

    public init(lookups: [UserLookup]?) {
        self.lookups = lookups
    }

    /// The POST body: `{lookupInfos: [{emailAddress | phoneNumber | userRecordName}]}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "users/discover request", keys: ["lookupInfos"])
        lookups = try RequestBody.array(o["lookupInfos"], "lookupInfos").enumerated().map { i, item in
            try UserLookup(json: item, "lookupInfos[\(i)]")
        }
    }
}

extension UserLookup {
    /// A Lookup Info dictionary naming one user: exactly one of `emailAddress`, `phoneNumber`,
    /// `userRecordName`.
    init(json j: JSONValue, _ what: String) throws {
        let o = try RequestBody.object(j, what, keys: ["emailAddress", "phoneNumber", "userRecordName"])
        let given = o.filter { !$0.value.isNull }
        guard given.count == 1, let (k, v) = given.first else {
            throw CloudKitError.badRequest("\(what) must name a user by exactly one of emailAddress, phoneNumber, userRecordName")
        }
        guard let s = v.stringValue else { throw CloudKitError.badRequest("\(what).\(k) must be a string, got \(v.kindName)") }
        switch k {
        case "emailAddress": self = .email(s)
        case "phoneNumber": self = .phone(s)
        default: self = .recordName(s)
        }
        try validate()
    }

    /// BAD_REQUEST when the value cannot name a user.
    func validate() throws {
        switch self {
        case .email(let e): try Validation.appleID(e)
        case .phone(let p): try Validation.phoneNumber(p)
        case .recordName(let r):
            guard Identifiers.isUserRecordName(r) else {
                throw CloudKitError.badRequest("'\(Names.describe(r))' is not a user record name (expected _ followed by 32 hex digits)")
            }
        }
    }
}

extension CloudKitAPI {
    public func discoverUsers(_ r: UsersDiscoverRequest, as caller: Caller) throws -> ItemsResponse {
        for l in r.lookups ?? [] { try l.validate() }
        let ctx = try preflight(.usersDiscover, caller.inDatabase(.public), need: .none)
        let me = try ctx.principal.requireUser(for: "discovering users")
        let identities = store.identities
        guard let lookups = r.lookups else {
            let users = try store.accounts.allUsers().filter { $0.userRecordName != me.userRecordName }
                .sorted { $0.userRecordName.utf8.lexicographicallyPrecedes($1.userRecordName.utf8) }
            return ItemsResponse("users", try users.compactMap { u in
                try identities.discoverability(container: caller.container, user: u) == .granted ? .value(try identities.identity(of: u, container: caller.container)) : nil
            }, for: ctx.audience)
        }
        // One identity per user found, in the order of the first lookup that found them; a
        // lookup that finds nobody (no such user, or one not discoverable) adds nothing, as the
        // native operation calls back only for identities it discovered.
        var seen = Set<String>()
        var found: [ItemsResponse.Item] = []
        for l in lookups {
            do {
                let identity = try identities.discover(l, container: caller.container)
                if let name = identity["userRecordName"]?.stringValue, seen.insert(name).inserted { found.append(.value(identity)) }
            } catch let e as CloudKitError where e.code == .notFound {}
        }
        return ItemsResponse("users", found, for: ctx.audience)
    }
}
