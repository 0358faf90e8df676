import CKJSON
import CKModel
import CKStore

/// Web auth tokens (`ckWebAuthToken`): the session of a user signed in on this device, for one
/// container environment, as Apple's sign-in popup hands one to CloudKit JS. `ck serve`'s sign-in
/// page and `ck account web-auth-token` make them; `authenticate` reads them.
extension CloudKitAPI {
    func webSessions() -> WebSessionStore { WebSessionStore(paths: store.paths, clock: clock, rotation: webTokenRotation) }

    /// A new session of the caller's user: `.device` (the device's account) or `.appleID(A)` (a
    /// user who signed in on this device), whose account must be available — the device's
    /// status binds both, as for every CLI caller. `{ckWebAuthToken, userRecordName, expires}`
    /// (ms since 1970): 30 minutes from now, or 14 days with `keepSignedIn`. The token is
    /// shown once; the store keeps only its hash.
    public func createWebAuthToken(as caller: Caller, keepSignedIn: Bool) throws -> DocumentBody {
        // Refused before any lock is taken (a refusal leaves the data directory as it was), then
        // checked again under the account lock: a sign-out cannot slip between the check and
        // the new session (it would miss the session and leave it valid).
        try checkWebAuthToken(as: caller)
        return try store.accounts.withLock {
            let who = try principal(caller)
            let user = try who.requireUser(for: "a web auth token")
            let made = try webSessions().create(userRecordName: user.userRecordName, container: caller.container,
                                                environment: caller.environment, keepSignedIn: keepSignedIn)
            return DocumentBody(["ckWebAuthToken": .string(made.token), "userRecordName": .string(user.userRecordName),
                                 "expires": .int(made.session.expires)])
        }
    }

    /// Whether `createWebAuthToken` would make the caller's user a token now, making nothing:
    /// `ck serve`'s sign-in page asks when no allowed page is there to take a session.
    public func checkWebAuthToken(as caller: Caller) throws {
        try Names.validateContainerID(caller.container)
        switch caller.user {
        case .device, .appleID: break
        case .userRecordName, .nobody:
            throw CloudKitError.badRequest("a web auth token is made for the device's account or a user who signed in on this device (--as APPLE-ID)")
        }
        _ = try principal(caller).requireUser(for: "a web auth token")
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

/// A user's web sessions (`ck account sessions`): each sign-in to `ck serve` — the sign-in
/// page, `ck account web-auth-token` — with the tokens rotation made from it, until they expire.
/// ck's own operations: the user is the device's account or `--as` a user who signed in here,
/// whatever the device's status (ending a session must work on a restricted device too).
extension CloudKitAPI {
    /// `{sessions: [{id, containerIdentifier, environment, created, expires, keepSignedIn,
    /// renewed?}]}`, oldest first. `id` is a prefix of the stored hash of the sign-in's first
    /// token: it names the session, and is no token.
    public func listWebSessions(as caller: Caller) throws -> DocumentBody {
        let user = try sessionUser(caller)
        let items: [JSONValue] = try webSessions().logins(userRecordName: user.userRecordName).map { l in
            var o: [String: JSONValue] = ["id": .string(l.id), "containerIdentifier": .string(l.container), "environment": .string(l.environment.rawValue),
                                          "created": .int(l.created), "expires": .int(l.expires), "keepSignedIn": .bool(l.keepSignedIn)]
            if let r = l.renewed { o["renewed"] = .int(r) }
            return .object(o)
        }
        return DocumentBody(["sessions": .array(items)], listKey: "sessions")
    }

    /// Ends one of the user's sessions (`id` as `listWebSessions` shows it), or all of them
    /// (nil): `{ended: [id]}`. NOT_FOUND for an id that names none of the user's live sessions.
    public func endWebSessions(_ id: String?, as caller: Caller) throws -> DocumentBody {
        let user = try sessionUser(caller)
        if let id {
            guard id.utf8.count == WebSessionStore.idDigits, id.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw CloudKitError.badRequest("'\(Names.describe(id))' is not a session id (\(WebSessionStore.idDigits) lowercase hex digits, as 'ck account sessions' lists them)")
            }
            guard try webSessions().logins(userRecordName: user.userRecordName).contains(where: { $0.id == id }) else {
                throw CloudKitError(.notFound, "\(user.appleID) has no web session '\(id)' ('ck account sessions' lists them)")
            }
        }
        let ended = try webSessions().end(userRecordName: user.userRecordName, login: id)
        return DocumentBody(["ended": .array(ended.map { .string($0) })])
    }

    /// The user whose sessions a command is about: the device's account, or `--as`.
    private func sessionUser(_ caller: Caller) throws -> UserAccount {
        guard let user = try principal(caller).user else {
            var e = CloudKitError(.authenticationRequired, "web sessions are a user's: \(AccountStatus.noAccount.refusal), and no --as APPLE-ID names another user")
            e.nextStep = .signIn
            throw e
        }
        return user
    }
}
