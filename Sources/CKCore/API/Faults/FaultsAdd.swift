import CKJSON
import CKModel
import CKStore

/// Arming a fault, an operation of ck's own (Docs/faults.md): the next client operations it
/// matches fail with a CloudKit error, as the service fails them, or — for
/// `notifications/deliver` — a push is dropped. Every member is checked before anything is
/// written: an invalid fault is BAD_REQUEST naming the member, and nothing is armed.
public struct AddFaultRequest: Sendable {
    public var op: FaultOperation
    /// What a matching operation fails with; nil only for `notifications/deliver`, which drops.
    public var error: FaultCode?
    /// Seconds the error tells the client to wait (THROTTLED, ZONE_BUSY, SERVICE_UNAVAILABLE,
    /// TRY_AGAIN_LATER only), 0…86400.
    public var retryAfter: Int?
    /// Fail the next `times` matching operations, then disarm; nil: every one, until cleared.
    public var times: Int?
    /// Fail this fraction (0 < rate ≤ 1) of matching operations, decided by `seed`.
    public var rate: Double?
    /// The seed of `rate`'s random sequence (0 when not given); only with `rate`.
    public var seed: Int64?
    /// Scopes, each narrowing what matches: a zone, a record (records/modify, records/lookup or
    /// `*`), a user (an Apple ID or a user record name), a device.
    public var zone: String?
    public var record: String?
    public var user: String?
    public var device: String?

    public init(op: FaultOperation, error: FaultCode?, retryAfter: Int? = nil, times: Int? = nil, rate: Double? = nil, seed: Int64? = nil,
                zone: String? = nil, record: String? = nil, user: String? = nil, device: String? = nil) {
        self.op = op
        self.error = error
        self.retryAfter = retryAfter
        self.times = times
        self.rate = rate
        self.seed = seed
        self.zone = zone
        self.record = record
        self.user = user
        self.device = device
    }

    /// A fault as JSON, in the members a fault is listed with: `{op, error?, retryAfter?,
    /// times?, rate?, seed?, zone?, record?, user?, device?}`; `error` by its name or alias, in
    /// any case.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "fault", keys: ["op", "error", "retryAfter", "times", "rate", "seed", "zone", "record", "user", "device"])
        guard let path = try RequestBody.string(o["op"], "op") else { throw CloudKitError.badRequest("a fault needs an 'op' string") }
        guard let op = FaultOperation(path: path) else { throw AddFaultRequest.unknownOperation(path) }
        var error: FaultCode?
        if let raw = try RequestBody.string(o["error"], "error") {
            guard let c = FaultCode.named(raw) else { throw AddFaultRequest.unknownCode(raw) }
            error = c
        }
        func int(_ key: String) throws -> Int64? {
            guard let v = o[key], !v.isNull else { return nil }
            guard let n = v.int64Value else { throw CloudKitError.badRequest("\(key) must be an integer, got \(v.kindName)") }
            return n
        }
        var rate: Double?
        if let v = o["rate"], !v.isNull {
            guard let d = v.doubleValue else { throw CloudKitError.badRequest("rate must be a number, got \(v.kindName)") }
            rate = d
        }
        func small(_ key: String) throws -> Int? {
            try int(key).map { n in
                guard let i = Int(exactly: n), i >= Int(Int32.min), i <= Int(Int32.max) else { throw CloudKitError.badRequest("\(key) \(n) is out of range") }
                return i
            }
        }
        self.init(op: op, error: error, retryAfter: try small("retryAfter"), times: try small("times"), rate: rate, seed: try int("seed"),
                  zone: try RequestBody.string(o["zone"], "zone"), record: try RequestBody.string(o["record"], "record"),
                  user: try RequestBody.string(o["user"], "user"), device: try RequestBody.string(o["device"], "device"))
    }

    /// BAD_REQUEST for an operation no fault can name.
    public static func unknownOperation(_ path: String) -> CloudKitError {
        CloudKitError.badRequest("unknown operation '\(Names.describe(path))'; valid operations: \(FaultOperation.paths.joined(separator: ", "))")
    }

    /// BAD_REQUEST for an error no fault can fail with.
    public static func unknownCode(_ name: String) -> CloudKitError {
        CloudKitError.badRequest("unknown error code '\(Names.describe(name))'; valid codes: \(FaultCode.allCases.map(\.rawValue).joined(separator: ", "))")
    }

    /// The codes that carry `retryAfter`.
    public static var retryCodes: String { FaultCode.allCases.filter(\.carriesRetryAfter).map(\.rawValue).joined(separator: ", ") }

    /// The endpoints a record scope applies to.
    public static var recordScopedOperations: String {
        Endpoint.allCases.filter(\.namesRecords).map(\.path).sorted().joined(separator: " and ")
    }

    /// The fault this request arms, every member checked.
    func fault() throws -> Fault {
        func invalid(_ check: () throws -> Void) throws {
            do { try check() } catch let e as CloudKitError { throw CloudKitError.badRequest("invalid " + e.reason) }
        }
        if op == .deliver {
            if let c = error { throw CloudKitError.badRequest("a \(op.path) fault drops notifications; it takes no error (\(c.rawValue))") }
        } else if error == nil {
            throw CloudKitError.badRequest("a \(op.path) fault needs an error; valid codes: \(FaultCode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let s = retryAfter {
            guard let c = error, c.carriesRetryAfter else {
                throw CloudKitError.badRequest("\(error?.rawValue ?? "a dropped notification") carries no retryAfter; the codes that do: \(Self.retryCodes)")
            }
            guard (0...86_400).contains(s) else { throw CloudKitError.badRequest("retryAfter must be a whole number of seconds, 0…86400, got \(s)") }
        }
        if let t = times, !(1...1_000_000_000).contains(t) { throw CloudKitError.badRequest("times must be from 1 to 1000000000, got \(t)") }
        if let p = rate, !(p.isFinite && p >= 1e-9 && p <= 1) { throw CloudKitError.badRequest("rate must be a fraction above 0 and at most 1, got \(p)") }
        if times != nil && rate != nil { throw CloudKitError.badRequest("times and rate exclude each other") }
        if let s = seed {
            guard rate != nil else { throw CloudKitError.badRequest("seed goes with rate") }
            guard s >= 0 else { throw CloudKitError.badRequest("seed must be a non-negative integer, got \(s)") }
        }
        if let z = zone { try invalid { try Names.validateZoneName(z) } }
        if let r = record {
            try invalid { try Names.validateRecordName(r) }
            guard op.takesRecordScope else {
                throw CloudKitError.badRequest("a record scope applies to \(Self.recordScopedOperations) (or *), not \(op.path)")
            }
        }
        if let u = user {
            // An Apple ID, or a user record name: whichever it is, it matches the user either names.
            if u.contains("@") { try Validation.appleID(u) } else { try invalid { try Names.validateName(u, noun: "user record name") } }
        }
        if let d = device { try invalid { try Names.validateName(d, noun: "device name") } }
        return Fault(op: op, code: error, retryAfter: retryAfter, times: times, rate: rate, seed: seed ?? 0, zone: zone,
                     record: record, user: user, device: device)
    }
}

/// The faults an operation on them names, in the order they are checked: `{faults: [fault]}`
/// (add, list: each with its id, what it matches, what it fails with and what is left of it),
/// or `{faults: [{id, deleted: true}]}` (clear).
public struct FaultsResponse: ResponseBody {
    public let faults: [Fault]
    /// Whether they were removed (`clearFaults`).
    public let deleted: Bool

    init(_ faults: [Fault], deleted: Bool = false) {
        self.faults = faults
        self.deleted = deleted
    }

    public var listKey: String? { "faults" }
    public var items: [any JSONEncodable] {
        faults.map { deleted ? JSONValue.object(["id": .string($0.id), "deleted": true]) : $0.json }
    }
    public var members: [String: JSONValue] { [:] }
}

extension CloudKitAPI {
    /// Arms a fault, giving it the next ID (`f1`, `f2`, …; not reused until every fault is
    /// cleared). Faults belong to the data directory, not to a caller: no account or
    /// container is involved, and no fault fails this.
    public func addFault(_ r: AddFaultRequest) throws -> FaultsResponse {
        let fault = try r.fault()
        return FaultsResponse([try FaultStore(paths: store.paths).add(fault)])
    }
}
