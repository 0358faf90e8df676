import CKCore

/// `ck fault add|list|clear`, and the check every client command makes before it runs
/// (Docs/faults.md).
enum FaultCommands {
    static var all: [Command] { [add, list, clear] }

    static let add: Command = Command(["fault", "add"],
        synopsis: "--op OP --error CODE [--retry-after S] [--times N | --rate P [--seed S]] [--zone Z] [--record R] [--user U] [--device D] | --drop-rate P",
        summary: "Arm a fault: the next matching operations fail with a CloudKit error",
        options: [
            OptionSpec("--op", value: "OP", help: "the client operation to fail: \(Fault.operations.joined(separator: ", ")), or * (all but notifications/deliver)"),
            OptionSpec("--error", value: "CODE", help: "the error: \(FaultCode.allCases.map(\.rawValue).joined(separator: ", ")) (REQUEST_RATE_LIMITED is THROTTLED)"),
            OptionSpec("--retry-after", value: "S", help: "seconds to wait before retrying (retryAfter), for \(retryCodes)"),
            OptionSpec("--times", value: "N", help: "fail the next N matching operations, then disarm [default: every one, until cleared]"),
            OptionSpec("--rate", value: "P", help: "fail a fraction P (0 < P ≤ 1) of matching operations, decided by --seed"),
            OptionSpec("--seed", value: "S", help: "seed of --rate's random sequence, so a run can be repeated [default: 0]"),
            OptionSpec("--record", value: "R", help: "fail only this record of a records/modify or records/lookup request (the others go on)"),
            OptionSpec("--user", value: "U", help: "only operations of this user (Apple ID or user record name)"),
            OptionSpec("--drop-rate", value: "P", help: "shorthand for --op notifications/deliver --rate P: drop a fraction P of notifications"),
        ],
        details: """
        Prints {"faults": [fault]}: its id (f1, f2, …), what it matches and what it fails with
        (error, and the envelope's serverErrorCode and ckErrorCode). A matching command fails
        as CloudKit would: nothing on stdout, nothing written, one line on stderr (or the JSON
        error envelope with --error-format json, with retryAfter when given), the exit code of
        the error (THROTTLED, ZONE_BUSY, SERVICE_UNAVAILABLE, TRY_AGAIN_LATER, NETWORK_FAILURE,
        LIMIT_EXCEEDED, QUOTA_EXCEEDED: 8). Faults are checked in the order they were added;
        the first that fires wins.
        Scopes: --zone Z (the global option, given on this line) matches commands acting on
        zone Z; --device D (the global option, given on this line) matches commands run with
        --device D; --user U matches the acting user. With --record R, only record R of a
        batch fails (exit 9; in an atomic custom-zone batch the others get ATOMIC_ERROR).
        --op notifications/deliver drops notifications on their way to devices instead (no
        --error): 'zone changes' still finds the changes. 'ck fault', help, version, status and
        fsck are never faulted, so 'ck fault clear' always works.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let fault = try parse(inv)
        let added = try FaultStore(paths: inv.store.paths).add(fault)
        inv.emit(["faults": [added.json]], listKey: "faults")
        return ExitCode.success
    }

    static let list: Command = Command(["fault", "list"], synopsis: "", summary: "List the armed faults, in the order they are checked",
        details: """
        Prints {"faults": [...]}: each fault as 'ck fault add' printed it, with what is left of
        it: times (matching operations still to fail), evaluations (operations a --rate fault
        has decided so far).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.emit(["faults": .array(try FaultStore(paths: inv.store.paths).list().map(\.json))], listKey: "faults")
        return ExitCode.success
    }

    static let clear: Command = Command(["fault", "clear"], synopsis: "[ID]", summary: "Disarm one fault, or all of them",
        details: """
        Prints {"faults": [{id, deleted: true}]} for each fault removed: the one named (NOT_FOUND,
        exit 3, when there is none by that ID) or, without an ID, every one (none: {"faults": []}).
        """) { inv in
        let id = try inv.positionals(max: 1, what: "").first
        let gone = try FaultStore(paths: inv.store.paths).clear(id: id)
        inv.emit(["faults": .array(gone.map { ["id": .string($0.id), "deleted": true] })], listKey: "faults")
        return ExitCode.success
    }

    static var retryCodes: String { FaultCode.allCases.filter(\.carriesRetryAfter).map(\.rawValue).joined(separator: ", ") }

    /// The fault `ck fault add` describes, every value checked: a refusal changes nothing.
    static func parse(_ inv: Invocation) throws -> Fault {
        let a = inv.args
        func refuse(_ m: String) -> UsageError { inv.usageError(m) }
        func name(_ check: () throws -> Void) throws {
            do { try check() } catch let e as CloudKitError { throw refuse("invalid " + e.reason) }
        }
        var rate = try a.value("--rate").map { try fraction($0, "--rate", inv) }
        var op = a.value("--op")
        if let raw = a.value("--drop-rate") {
            if let o = op, o != Fault.deliver { throw refuse("--drop-rate drops notifications (--op \(Fault.deliver)); it does not go with --op \(o)") }
            if rate != nil { throw refuse("--drop-rate and --rate exclude each other") }
            op = Fault.deliver
            rate = try fraction(raw, "--drop-rate", inv)
        }
        guard let op = op else { throw refuse("missing --op OP; valid operations: \(Fault.operations.joined(separator: ", ")), *") }
        guard op == Fault.any || Fault.operations.contains(op) else {
            let hint = Suggestions.hint(op, among: Fault.operations)
            throw refuse("unknown operation '\(Names.describe(op))'; valid operations: \(Fault.operations.joined(separator: ", ")), *\(hint)")
        }
        var code: FaultCode?
        if op == Fault.deliver {
            if a.value("--error") != nil { throw refuse("a \(Fault.deliver) fault drops notifications; it takes no --error") }
        } else {
            let valid = FaultCode.allCases.map(\.rawValue).joined(separator: ", ")
            guard let raw = a.value("--error") else { throw refuse("missing --error CODE; valid codes: \(valid)") }
            guard let c = FaultCode.named(raw) else {
                let hint = Suggestions.hint(raw.uppercased(), among: FaultCode.allCases.map(\.rawValue))
                throw refuse("unknown error code '\(Names.describe(raw))'; valid codes: \(valid)\(hint)")
            }
            code = c
        }
        var retryAfter: Int?
        if let raw = a.value("--retry-after") {
            guard let c = code, c.carriesRetryAfter else {
                throw refuse("\(code?.rawValue ?? "a dropped notification") carries no retryAfter; the codes that do: \(retryCodes)")
            }
            guard let s = Int(raw), (0...86_400).contains(s) else { throw refuse("--retry-after must be a whole number of seconds, 0…86400, got '\(Names.describe(raw))'") }
            retryAfter = s
        }
        let times = try inv.positiveInt("--times", max: 1_000_000_000)
        if times != nil && rate != nil { throw refuse("--times and --rate exclude each other") }
        var seed: Int64 = 0
        if let raw = a.value("--seed") {
            guard rate != nil else { throw refuse("--seed goes with --rate") }
            guard let s = Int64(raw), s >= 0 else { throw refuse("--seed must be a non-negative integer, got '\(Names.describe(raw))'") }
            seed = s
        }
        let zones = a.values("--zone")
        if let z = zones.last { try name { try Names.validateZoneName(z) } }
        let record = a.value("--record")
        if let r = record {
            try name { try Names.validateRecordName(r) }
            guard op == Fault.any || Fault.perRecordOperations.contains(op) else {
                throw refuse("--record applies to \(Fault.perRecordOperations.sorted().joined(separator: " and ")) (or *), not \(op)")
            }
        }
        let user = a.value("--user")
        if let u = user {
            if u.contains("@") {
                do { try Validation.appleID(u) } catch let e as CloudKitError { throw refuse(e.reason) }
            } else {
                try name { try Names.validateName(u, noun: "user record name") }
            }
        }
        // The global --device, as given on this line (not $CK_DEVICE): the device the fault is for.
        return Fault(op: op, code: code, retryAfter: retryAfter, times: times, rate: rate, seed: seed, zone: zones.last,
                     record: record, user: user, device: a.value("--device"))
    }

    static func fraction(_ raw: String, _ option: String, _ inv: Invocation) throws -> Double {
        // A decimal fraction (0.25, 1, 5e-1), not Swift's hex floats or a subnormal.
        let decimal = !raw.isEmpty && raw.allSatisfy { "0123456789.eE-+".contains($0) }
        guard decimal, let p = Double(raw), p.isFinite, p >= 1e-9, p <= 1 else {
            throw inv.usageError("\(option) must be a fraction above 0 and at most 1, got '\(Names.describe(raw))'")
        }
        return p
    }

    // MARK: the checks every command makes

    /// Fails the command with the error of the first fault that fires for the operation it
    /// stands for, before it reads or writes anything. The zones it acts on: those named on the
    /// command line (`zone create`'s names; `--zone`, whose default counts for the commands
    /// about records and record changes).
    static func check(_ inv: Invocation) throws {
        guard let op = inv.command.endpoint else { return }
        let g = inv.globals
        let zones: [String]
        switch op {
        case "zones/modify": zones = inv.args.positionals
        case "records/modify", "records/lookup", "records/query", "changes/zone": zones = g.zones.isEmpty ? [g.zone] : g.zones
        default: zones = g.zones
        }
        try FaultStore(paths: inv.store.paths).check(op: op, zones: zones, user: { actingUser(inv) }, device: g.device)
    }

    /// Who the command acts as: the user record name when this device knows the user, else
    /// the Apple ID `--as` names.
    static func actingUser(_ inv: Invocation) -> String? {
        (try? inv.store.accounts.caller(actingAs: inv.globals.actingAs, deviceID: inv.globals.device))?.user?.userRecordName ?? inv.globals.actingAs
    }

    /// The per-record hook of a command that names records one by one (records/modify,
    /// records/lookup), when some fault is scoped to a record; only the command's own
    /// operation is faulted, not the lookups a save makes on the side.
    static func recordHook(_ inv: Invocation, _ db: Database) throws -> ((String, String, String) throws -> CloudKitError?)? {
        guard let op = inv.command.endpoint, Fault.perRecordOperations.contains(op) else { return nil }
        let faults = FaultStore(paths: inv.store.paths)
        guard try faults.hasRecordFaults() else { return nil }
        let user = db.caller.user?.userRecordName ?? inv.globals.actingAs
        let device = inv.globals.device
        return { o, zone, name in o == op ? try faults.recordFault(op: o, zone: zone, record: name, user: user, device: device) : nil }
    }
}
