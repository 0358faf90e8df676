import CKJSON

/// CloudKit Web Services server error codes (reference §4.2), plus CHANGE_TOKEN_EXPIRED,
/// SERVICE_UNAVAILABLE (a code CloudKit JS knows) and NETWORK_FAILURE (client-side: the
/// request never got an answer; only `ck fault` produces it). See Docs/faults.md.
public enum ServerErrorCode: String, Sendable, CaseIterable {
    case accessDenied = "ACCESS_DENIED"
    case atomicError = "ATOMIC_ERROR"
    case authenticationFailed = "AUTHENTICATION_FAILED"
    case authenticationRequired = "AUTHENTICATION_REQUIRED"
    case badRequest = "BAD_REQUEST"
    case conflict = "CONFLICT"
    case exists = "EXISTS"
    case internalError = "INTERNAL_ERROR"
    case notFound = "NOT_FOUND"
    case quotaExceeded = "QUOTA_EXCEEDED"
    case throttled = "THROTTLED"
    case tryAgainLater = "TRY_AGAIN_LATER"
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    case zoneNotFound = "ZONE_NOT_FOUND"
    case changeTokenExpired = "CHANGE_TOKEN_EXPIRED"
    case limitExceeded = "LIMIT_EXCEEDED"
    case serviceUnavailable = "SERVICE_UNAVAILABLE"
    case networkFailure = "NETWORK_FAILURE"
    /// A record already in another share (native `alreadyShared`, 30); see Docs/sharing.md.
    case alreadyShared = "ALREADY_SHARED"

    /// The native `CKError.Code` raw value clients map this to (reference §4.4).
    public var ckErrorCode: Int {
        switch self {
        case .accessDenied: return 10
        case .atomicError: return 22
        case .authenticationFailed, .authenticationRequired: return 9
        case .badRequest: return 12
        case .conflict, .exists: return 14
        case .internalError: return 1
        case .notFound: return 11
        case .quotaExceeded: return 25
        case .throttled: return 7
        case .tryAgainLater: return 6
        case .validatingReferenceError: return 31
        case .zoneNotFound: return 26
        case .changeTokenExpired: return 21
        case .limitExceeded: return 27
        case .serviceUnavailable: return 6
        case .networkFailure: return 4
        case .alreadyShared: return 30
        }
    }

    /// The HTTP status Apple's servers answer with (reference §4.2; SERVICE_UNAVAILABLE's is
    /// HTTP's own meaning). For the codes its table leaves out, the nearest: an expired change
    /// token or a limit is the request's fault (400), a record already shared a conflict (409).
    /// nil for a client-side failure, which has no response.
    public var httpStatus: Int? {
        switch self {
        case .accessDenied: return 403
        case .atomicError, .badRequest: return 400
        case .authenticationFailed: return 401
        case .authenticationRequired: return 421
        case .conflict, .exists: return 409
        case .internalError: return 500
        case .notFound, .zoneNotFound: return 404
        case .quotaExceeded: return 413
        case .throttled: return 429
        case .tryAgainLater, .serviceUnavailable: return 503
        case .validatingReferenceError: return 412
        case .changeTokenExpired, .limitExceeded: return 400
        case .alreadyShared: return 409
        case .networkFailure: return nil
        }
    }
}

/// The one error type the core throws. Carries what the Web Services error envelope carries.
public struct CloudKitError: Error, Equatable, CustomStringConvertible {
    public var code: ServerErrorCode
    public var reason: String
    public var recordName: String?
    public var zoneID: ZoneID?
    public var subscriptionID: String?
    public var retryAfter: Int?
    /// For CONFLICT and EXISTS: the record as the server has it.
    public var serverRecord: Record?
    /// The native `CKError.Code` when it is not the one `code` maps to: a busy zone is
    /// TRY_AGAIN_LATER over Web Services but zoneBusy (23) to a native client.
    public var nativeCode: Int?
    /// The database the error concerns, when it concerns one (with `zoneID`: where it happened).
    public var database: DatabaseScope?
    /// What the user can do next, as data: each front end words it (NextStep).
    public var nextStep: NextStep?
    /// Random per error, as in Apple's responses; not part of what makes two errors equal.
    public let uuid = Identifiers.newErrorUUID()

    public init(_ code: ServerErrorCode, _ reason: String, recordName: String? = nil, zoneID: ZoneID? = nil,
                subscriptionID: String? = nil, retryAfter: Int? = nil, serverRecord: Record? = nil) {
        self.code = code
        self.reason = reason
        self.recordName = recordName
        self.zoneID = zoneID
        self.subscriptionID = subscriptionID
        self.retryAfter = retryAfter
        self.serverRecord = serverRecord
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    /// The native `CKError.Code` a client maps this error to (the envelope's `ckErrorCode`).
    public var ckErrorCode: Int { nativeCode ?? code.ckErrorCode }

    public static func == (a: CloudKitError, b: CloudKitError) -> Bool {
        a.code == b.code && a.reason == b.reason && a.recordName == b.recordName && a.zoneID == b.zoneID
            && a.subscriptionID == b.subscriptionID && a.retryAfter == b.retryAfter && a.serverRecord == b.serverRecord
            && a.nativeCode == b.nativeCode && a.database == b.database && a.nextStep == b.nextStep
    }

    public static func badRequest(_ reason: String) -> CloudKitError { CloudKitError(.badRequest, reason) }

    /// The same error with a next step for its user.
    public func with(_ step: NextStep) -> CloudKitError {
        var e = self
        e.nextStep = step
        return e
    }
    public static func internalError(_ reason: String) -> CloudKitError { CloudKitError(.internalError, reason) }

    /// The Web Services error dictionary; a CONFLICT or EXISTS carries the server's record as
    /// a response shows it (`style`, else as stored). For the command line (`audience`, by
    /// default the style's) it carries `ckErrorCode` too; for the wire, as CloudKit sends it.
    public func envelope(style: ResponseStyle? = nil, for audience: ResponseStyle.Audience? = nil) -> JSONValue {
        var o: [String: JSONValue] = [
            "serverErrorCode": .string(code.rawValue),
            "reason": .string(reason),
        ]
        if (audience ?? style?.audience ?? .commandLine) == .commandLine { o["ckErrorCode"] = .int(Int64(ckErrorCode)) }
        if let r = recordName { o["recordName"] = .string(r) }
        if let z = zoneID { o["zoneID"] = z.json }
        if let s = subscriptionID { o["subscriptionID"] = .string(s) }
        if let r = retryAfter { o["retryAfter"] = .int(Int64(r)) }
        if let s = serverRecord { o["serverRecord"] = style.map { s.response($0) } ?? s.json() }
        o["uuid"] = .string(uuid)
        return .object(o)
    }
}
