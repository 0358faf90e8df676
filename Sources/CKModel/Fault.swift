import CKJSON

/// What a fault makes an operation fail with: a CloudKit error as the service returns it
/// (Docs/faults.md has the table). Most are a `ServerErrorCode` as they are; ZONE_BUSY is
/// TRY_AGAIN_LATER on the wire with the native zoneBusy (23) as its `ckErrorCode`, since Web
/// Services has no code of its own for it (reference §4.4).
public enum FaultCode: String, Sendable, CaseIterable {
    // Whole-request failures a client retries.
    case throttled = "THROTTLED"
    case zoneBusy = "ZONE_BUSY"
    case serviceUnavailable = "SERVICE_UNAVAILABLE"
    case tryAgainLater = "TRY_AGAIN_LATER"
    case networkFailure = "NETWORK_FAILURE"
    // Failures a retry does not cure.
    case quotaExceeded = "QUOTA_EXCEEDED"
    case internalError = "INTERNAL_ERROR"
    case limitExceeded = "LIMIT_EXCEEDED"
    case changeTokenExpired = "CHANGE_TOKEN_EXPIRED"
    case authenticationRequired = "AUTHENTICATION_REQUIRED"
    case authenticationFailed = "AUTHENTICATION_FAILED"
    case accessDenied = "ACCESS_DENIED"
    case badRequest = "BAD_REQUEST"
    case zoneNotFound = "ZONE_NOT_FOUND"
    // Also what a single record of a batch fails with.
    case notFound = "NOT_FOUND"
    case conflict = "CONFLICT"
    case exists = "EXISTS"
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"

    /// Other spellings taken on input: the native name of THROTTLED.
    public static let aliases: [String: FaultCode] = ["REQUEST_RATE_LIMITED": .throttled]

    /// A code by its name or alias, in any case.
    public static func named(_ s: String) -> FaultCode? {
        let u = s.uppercased()
        return FaultCode(rawValue: u) ?? aliases[u]
    }

    /// The `serverErrorCode` the envelope carries.
    public var serverErrorCode: ServerErrorCode {
        self == .zoneBusy ? .tryAgainLater : ServerErrorCode(rawValue: rawValue)!
    }

    /// The native `CKError.Code` the envelope's `ckErrorCode` carries.
    public var ckErrorCode: Int { self == .zoneBusy ? 23 : serverErrorCode.ckErrorCode }

    /// Whether CloudKit carries `retryAfter` (`CKErrorRetryAfterKey`) with this error.
    public var carriesRetryAfter: Bool { [.throttled, .zoneBusy, .serviceUnavailable, .tryAgainLater].contains(self) }

    /// The reason text, in the words Apple's servers use where they are known.
    package var reason: String {
        switch self {
        case .throttled: return "request rate limited: too many requests"
        case .zoneBusy: return "zone busy: too many requests for the zone"
        case .serviceUnavailable: return "service unavailable"
        case .tryAgainLater: return "the server could not handle the request now"
        case .networkFailure: return "network failure: no response from the server"
        case .quotaExceeded: return "quota exceeded: the iCloud storage of the account is full"
        case .internalError: return "internal server error"
        case .limitExceeded: return "limit exceeded: the request is too large"
        case .changeTokenExpired: return "change token expired"
        case .authenticationRequired: return "request needs authorization"
        case .authenticationFailed: return "authentication failed"
        case .accessDenied: return "access denied"
        case .badRequest: return "bad request"
        case .zoneNotFound: return "zone not found"
        case .notFound: return "not found"
        case .conflict: return "oplock error: the record changed on the server"
        case .exists: return "record to insert already exists"
        case .validatingReferenceError: return "the request violates a validating reference constraint"
        }
    }
}

/// What a fault matches: one client operation, by its `Endpoint`, or every one of them but
/// notification delivery (`*`).
public enum FaultOperation: Hashable, Sendable {
    case endpoint(Endpoint)
    /// `*`: every endpoint but `notifications/deliver` (which drops instead of failing).
    case all

    /// How `faults.json`, `ck fault list` and a request name it: the endpoint's path, or `*`.
    public var path: String {
        switch self {
        case .endpoint(let e): return e.path
        case .all: return "*"
        }
    }

    /// An operation by its path or `*`; nil for anything else.
    public init?(path: String) {
        if path == "*" { self = .all; return }
        guard let e = Endpoint(path: path) else { return nil }
        self = .endpoint(e)
    }

    /// Every operation a fault can name, in `Endpoint` order, then `*`.
    public static var paths: [String] { Endpoint.allCases.map(\.path) + ["*"] }

    /// A push reaching a device: a fault here drops the notification (nothing fails).
    public static let deliver = FaultOperation.endpoint(.notificationsDeliver)

    /// Whether this fault fails requests of `endpoint` (`*` never drops notifications).
    package func matches(_ endpoint: Endpoint) -> Bool {
        switch self {
        case .endpoint(let e): return e == endpoint
        case .all: return endpoint != .notificationsDeliver
        }
    }

    /// Whether a fault of this operation can be scoped to one record: the endpoints whose
    /// requests name records one by one, and `*`.
    public var takesRecordScope: Bool {
        switch self {
        case .endpoint(let e): return e.namesRecords
        case .all: return true
        }
    }
}

/// One armed fault (`ck fault add`): the operations it matches and what they fail with.
public struct Fault: Equatable, Sendable {
    public var id: String
    public var op: FaultOperation
    /// What a matching operation fails with; nil for a delivery fault, which drops instead.
    public var code: FaultCode?
    public var retryAfter: Int?
    /// Matching operations left to fail; nil: no count.
    public var times: Int?
    /// The fraction of matching operations that fail, decided by `seed` and `evaluations`.
    public var rate: Double?
    public var seed: Int64
    /// How many matching operations a rate fault has decided so far.
    public var evaluations: Int64
    public var zone: String?
    public var record: String?
    /// An Apple ID or a user record name.
    public var user: String?
    public var device: String?

    public init(id: String = "", op: FaultOperation, code: FaultCode?, retryAfter: Int? = nil, times: Int? = nil, rate: Double? = nil,
                seed: Int64 = 0, zone: String? = nil, record: String? = nil, user: String? = nil, device: String? = nil) {
        self.id = id
        self.op = op
        self.code = code
        self.retryAfter = retryAfter
        self.times = times
        self.rate = rate
        self.seed = seed
        self.evaluations = 0
        self.zone = zone
        self.record = record
        self.user = user
        self.device = device
    }

    /// The error a matching operation fails with.
    public func error(recordName: String? = nil) -> CloudKitError {
        let c = code ?? .internalError
        var why = c.reason
        if let r = recordName, c == .notFound { why = "record '\(Names.describe(r))' not found" }
        if let z = zone, c == .zoneBusy || c == .zoneNotFound { why += " ('\(Names.describe(z))')" }
        if let s = retryAfter { why += "; retry after \(s) second\(s == 1 ? "" : "s")" }
        var e = CloudKitError(c.serverErrorCode, why + " (fault \(id))", recordName: recordName, retryAfter: retryAfter)
        if c.ckErrorCode != c.serverErrorCode.ckErrorCode { e.nativeCode = c.ckErrorCode }
        return e
    }

    /// The fault as `ck fault list` prints it and `faults.json` stores it: what it matches,
    /// what it fails with (`error`, and the `envelope`'s serverErrorCode and ckErrorCode), how
    /// often; a delivery fault has `drops: true` instead.
    public var json: JSONValue {
        var o: [String: JSONValue] = ["id": .string(id), "op": .string(op.path)]
        if let c = code {
            o["error"] = .string(c.rawValue)
            // Nested, so that a fault is not taken for an error dictionary.
            o["envelope"] = ["serverErrorCode": .string(c.serverErrorCode.rawValue), "ckErrorCode": .int(Int64(c.ckErrorCode))]
        } else {
            o["drops"] = true
        }
        if let r = retryAfter { o["retryAfter"] = .int(Int64(r)) }
        if let t = times { o["times"] = .int(Int64(t)) }
        if let r = rate {
            o["rate"] = .double(r)
            o["seed"] = .int(seed)
            o["evaluations"] = .int(evaluations)
        }
        if let z = zone { o["zone"] = .string(z) }
        if let r = record { o["record"] = .string(r) }
        if let u = user { o["user"] = .string(u) }
        if let d = device { o["device"] = .string(d) }
        return .object(o)
    }

    package init(stored j: JSONValue) throws {
        func bad(_ what: String) -> CloudKitError { CloudKitError.internalError("malformed fault in faults.json: \(what)") }
        guard let id = j["id"]?.stringValue, let path = j["op"]?.stringValue else { throw bad("no id or op") }
        guard let op = FaultOperation(path: path) else { throw bad("unknown op '\(Names.describe(path))'") }
        var code: FaultCode?
        if let e = j["error"]?.stringValue {
            guard let c = FaultCode(rawValue: e) else { throw bad("unknown error '\(Names.describe(e))'") }
            code = c
        }
        self.init(id: id, op: op, code: code, retryAfter: j["retryAfter"]?.int64Value.map { Int($0) },
                  times: j["times"]?.int64Value.map { Int($0) }, rate: j["rate"]?.doubleValue, seed: j["seed"]?.int64Value ?? 0,
                  zone: j["zone"]?.stringValue, record: j["record"]?.stringValue, user: j["user"]?.stringValue,
                  device: j["device"]?.stringValue)
        evaluations = j["evaluations"]?.int64Value ?? 0
    }

    /// Whether the `counter`-th decision of a rate fault fails its operation: the counter-th
    /// output of splitmix64 seeded with `seed`, as a fraction of 2^64, below `rate`. The same
    /// seed gives the same sequence on every machine.
    public static func decide(seed: Int64, counter: Int64, rate: Double) -> Bool {
        let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15
        var z = UInt64(bitPattern: seed) &+ (UInt64(bitPattern: counter) &+ 1) &* gamma
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / 9_007_199_254_740_992.0 < rate
    }
}
