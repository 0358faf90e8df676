import CKModel
import CKStore

/// ck's account operations: signing the device in and out and simulating an account status
/// (parental controls, MDM, an outage). Each appends an account-changed event (CloudKit's
/// `CKAccountChanged`) and answers the caller's status as `account/status` does. They change
/// the device itself, so they start with no preflight of the caller's account; no client
/// sends them (no endpoint, no fault).
public struct SignInRequest: Sendable {
    public var appleID: String
    public var givenName: String?
    public var familyName: String?
    /// In international form (`+1 408 555 0100`).
    public var phoneNumber: String?

    public init(appleID: String, givenName: String? = nil, familyName: String? = nil, phoneNumber: String? = nil) {
        self.appleID = appleID
        self.givenName = givenName
        self.familyName = familyName
        self.phoneNumber = phoneNumber
    }
}

extension CloudKitAPI {
    /// Signs the device in, creating the iCloud user on first use with a user record name that
    /// is never reused for another Apple ID.
    public func signIn(_ r: SignInRequest, as caller: Caller) throws -> DocumentBody {
        try store.accounts.signIn(appleID: r.appleID, givenName: r.givenName, familyName: r.familyName, phone: r.phoneNumber)
        return statusBody(try principal(caller))
    }

    /// An Apple ID signed in on the web (`ck serve`'s sign-in page): the user is made if it is
    /// new, and the device's own account stays as it is. `{appleID, userRecordName}`.
    public func addWebUser(appleID: String) throws -> DocumentBody {
        // The device's status binds every user of it: refused before anything is written.
        let device = try store.accounts.device()
        guard device.status == .available else {
            throw CloudKitError(.authenticationRequired, "no Apple ID can sign in on the web while this device's account is \(device.status.rawValue)")
        }
        let u = try store.accounts.register(appleID: appleID)
        return DocumentBody(["appleID": .string(u.appleID), "userRecordName": .string(u.userRecordName)])
    }

    /// Signs out the user the caller names: the device's account, or `--as` a user who signed in
    /// here. Their web sessions end (`ck serve`); the device's account changes — to noAccount,
    /// with its account-changed event — only when it is that user, as signing out of one
    /// iCloud session leaves the device's own account alone. Answers the device's account as
    /// `account/status` shows it, and `signedOut: {appleID, userRecordName, webSessionsEnded}`
    /// when there was a user to sign out.
    public func signOut(as caller: Caller) throws -> DocumentBody {
        // An Apple ID that never signed in here is refused (as every `--as`), changing nothing.
        if let a = CloudKitAPI.appleID(caller.user) { _ = try store.accounts.caller(actingAs: a, deviceID: caller.deviceID) }
        let (user, ended) = try store.accounts.signOut(user: CloudKitAPI.appleID(caller.user))
        var body = statusBody(try principal(.device, deviceID: caller.deviceID)).document
        if let user {
            body["signedOut"] = ["appleID": .string(user.appleID), "userRecordName": .string(user.userRecordName), "webSessionsEnded": .int(Int64(ended))]
        }
        return DocumentBody(body)
    }

    /// `available` needs an account signed in.
    public func setAccountStatus(_ status: AccountStatus, as caller: Caller) throws -> DocumentBody {
        try store.accounts.setStatus(status)
        return statusBody(try principal(caller))
    }
}

/// The account-changed events `{seq, timestamp, type: "accountChanged", status,
/// userRecordName?, appleID?}`, oldest first: those after `since` (the seq of the last one a
/// reader handled). `--follow` reads again from the last seq it printed.
public struct AccountEventsRequest: Sendable {
    public var since: Int64

    public init(since: Int64 = 0) {
        self.since = since
    }
}

extension CloudKitAPI {
    public func accountEvents(_ r: AccountEventsRequest, as caller: Caller) throws -> DocumentBody {
        if r.since < 0 { throw CloudKitError.badRequest("an event seq is not negative; got \(r.since)") }
        let events = try store.accounts.events().filter { ($0["seq"]?.int64Value ?? 0) > r.since }
        return DocumentBody(["events": .array(events)], listKey: "events")
    }
}
