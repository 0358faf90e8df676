import CKJSON
import CKModel
import CKStore

/// `users/caller` (GET): the caller's user identity, at the top level of the body as CloudKit
/// JS reads it — `{userRecordName, lookupInfo: {emailAddress, phoneNumber?}, nameComponents?}`,
/// name components only after the user made themselves discoverable in this container.
extension CloudKitAPI {
    public func callerIdentity(as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(.usersCaller, caller.inDatabase(.public), need: .none)
        let user = try ctx.principal.requireUser(for: "fetching the user identity")
        guard case .object(let o) = try store.identities.identity(of: user, container: caller.container) else { return DocumentBody([:]) }
        return DocumentBody(o)
    }
}

/// `users/current` (GET, Apple's GetCurrentUser): `{userRecordName, firstName?, lastName?}`,
/// the names only when the user is discoverable in this container (a user who is not gets
/// only the record name, as recorded from Apple's servers).
extension CloudKitAPI {
    public func currentUser(as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(.usersCurrent, caller.inDatabase(.public), need: .none)
        let user = try ctx.principal.requireUser(for: "fetching the current user")
        var o: [String: JSONValue] = ["userRecordName": .string(user.userRecordName)]
        if try store.identities.discoverability(container: caller.container, user: user) == .granted {
            if let g = user.givenName { o["firstName"] = .string(g) }
            if let f = user.familyName { o["lastName"] = .string(f) }
        }
        return DocumentBody(o)
    }
}
