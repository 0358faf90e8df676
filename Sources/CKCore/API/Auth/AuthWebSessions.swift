/// Web auth tokens (`ckWebAuthToken`): the session of a user signed in on this device, for one
/// container environment, as Apple's sign-in popup hands one to CloudKit JS. `ck serve`'s sign-in
/// page and `ck account web-auth-token` make them; `authenticate` reads them.
extension CloudKitAPI {
    func webSessions() -> WebSessionStore { WebSessionStore(paths: store.paths, clock: clock) }

    /// A new session of the caller's user: `.device` (the device's account) or `.appleID(A)` (a
    /// user who signed in on this device), whose account must be available — the device's
    /// status binds both, as for every CLI caller. `{ckWebAuthToken, userRecordName, expires}`
    /// (ms since 1970): 30 minutes from now, or 14 days with `keepSignedIn`. The token is
    /// shown once; the store keeps only its hash.
    public func createWebAuthToken(as caller: Caller, keepSignedIn: Bool) throws -> DocumentBody {
        try Names.validateContainerID(caller.container)
        switch caller.user {
        case .device, .appleID: break
        case .userRecordName, .nobody:
            throw CloudKitError.badRequest("a web auth token is made for the device's account or a user who signed in on this device (--as APPLE-ID)")
        }
        // Refused before any lock is taken (a refusal leaves the data directory as it was), then
        // checked again under the account lock: a sign-out cannot slip between the check and
        // the new session (it would miss the session and leave it valid).
        _ = try principal(caller).requireUser(for: "a web auth token")
        return try store.accounts.withLock {
            let who = try principal(caller)
            let user = try who.requireUser(for: "a web auth token")
            let made = try webSessions().create(userRecordName: user.userRecordName, container: caller.container,
                                                environment: caller.environment, keepSignedIn: keepSignedIn)
            return DocumentBody(["ckWebAuthToken": .string(made.token), "userRecordName": .string(user.userRecordName),
                                 "expires": .int(made.session.expires)])
        }
    }

    /// The users who signed in on this device, for `ck serve`'s sign-in page: `{users:
    /// [{appleID, userRecordName, name?}]}` by Apple ID; `name` is the given and family names.
    public func webSignInUsers() throws -> DocumentBody {
        let users = try store.accounts.allUsers().sorted { $0.appleID.lowercased().utf8.lexicographicallyPrecedes($1.appleID.lowercased().utf8) }
        let items: [JSONValue] = users.map { u in
            var o: [String: JSONValue] = ["appleID": .string(u.appleID), "userRecordName": .string(u.userRecordName)]
            let name = [u.givenName, u.familyName].compactMap { $0 }.joined(separator: " ")
            if !name.isEmpty { o["name"] = .string(name) }
            return .object(o)
        }
        return DocumentBody(["users": .array(items)], listKey: "users")
    }
}
