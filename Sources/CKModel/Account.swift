import CKJSON

/// CloudKit's account statuses (`CKAccountStatus`).
public enum AccountStatus: String, Sendable, CaseIterable {
    case available, noAccount, restricted, couldNotDetermine, temporarilyUnavailable

    /// Why a private-database or write request is refused under this status.
    public var refusal: String {
        switch self {
        case .available: return "the account is available"
        case .noAccount: return "no iCloud account is signed in on this device"
        case .restricted: return "iCloud access is restricted on this device (parental controls or device management)"
        case .couldNotDetermine: return "the iCloud account status could not be determined"
        case .temporarilyUnavailable: return "the iCloud account is temporarily unavailable; wait for an account-changed event"
        }
    }

    /// The native `CKError.Code` a request refused under this status fails with: a temporarily
    /// unavailable account is `accountTemporarilyUnavailable` (36), the others
    /// `notAuthenticated` (9), the code AUTHENTICATION_REQUIRED maps to.
    public var refusalNativeCode: Int? { self == .temporarilyUnavailable ? 36 : nil }
}

/// An iCloud user known to this device.
public struct UserAccount: Equatable, Sendable {
    public var appleID: String
    public var userRecordName: String
    public var givenName: String?
    public var familyName: String?
    public var phoneNumber: String?

    public init(appleID: String, userRecordName: String, givenName: String? = nil, familyName: String? = nil, phoneNumber: String? = nil) {
        self.appleID = appleID
        self.userRecordName = userRecordName
        self.givenName = givenName
        self.familyName = familyName
        self.phoneNumber = phoneNumber
    }

    package var stored: JSONValue {
        var o: [String: JSONValue] = [
            "schemaVersion": .int(FileFormat.schemaVersion),
            "appleID": .string(appleID),
            "userRecordName": .string(userRecordName),
        ]
        if let g = givenName { o["givenName"] = .string(g) }
        if let f = familyName { o["familyName"] = .string(f) }
        if let p = phoneNumber { o["phoneNumber"] = .string(p) }
        return .object(o)
    }

    package init(stored j: JSONValue) throws {
        guard let a = j["appleID"]?.stringValue, let u = j["userRecordName"]?.stringValue else {
            throw CloudKitError.internalError("malformed user file")
        }
        self.init(appleID: a, userRecordName: u, givenName: j["givenName"]?.stringValue,
                  familyName: j["familyName"]?.stringValue, phoneNumber: j["phoneNumber"]?.stringValue)
    }
}

/// Why a request of `ck serve` acts as nobody, when it carries a credential that names no user:
/// a web auth token that is missing, malformed, unknown, expired or replaced
/// (AUTHENTICATION_REQUIRED, 421, with the sign-in page), or a server-to-server key that has no
/// user (ACCESS_DENIED, 403). A request that needs a user is refused with it, instead of with the
/// device's account status, which has nothing to do with it.
public struct NobodyReason: Sendable, Equatable {
    public var code: ServerErrorCode
    public var reason: String

    public init(_ code: ServerErrorCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// Who a request acts as, once the preflight resolved its `Caller`: the account status the
/// device reports and the user acting (nil: nobody is signed in).
public struct Principal: Sendable {
    public var status: AccountStatus
    public var user: UserAccount?
    public var deviceID: String
    /// Why nobody acts, when a credential of `ck serve` named no user (nil otherwise).
    public var nobodyReason: NobodyReason?

    public init(status: AccountStatus, user: UserAccount?, deviceID: String, nobodyReason: NobodyReason? = nil) {
        self.status = status
        self.user = user
        self.deviceID = deviceID
        self.nobodyReason = nobodyReason
    }

    /// The signed-in user, or AUTHENTICATION_REQUIRED naming the status that blocks it (or, for
    /// a request of `ck serve` that named no user, what is wrong with its credential). `what` is
    /// made only for the error (every request asks).
    public func requireUser(for what: @autoclosure () -> String) throws -> UserAccount {
        if user == nil, let why = nobodyReason {
            throw CloudKitError(why.code, "\(what()) needs a signed-in user: \(why.reason)")
        }
        guard status == .available, let u = user else {
            var e = CloudKitError(.authenticationRequired, "\(what()) needs an available iCloud account: \(status.refusal)")
            e.nextStep = .signIn
            e.nativeCode = status.refusalNativeCode
            throw e
        }
        return u
    }
}
