import CKCore
import CKModel

/// `ck fault add|list|clear` (Docs/faults.md): the argv of a fault, and the check that commands
/// not yet on the API make before they run.
enum FaultCommands {
    /// The operations `--op` takes, as help and errors list them.
    static var operations: String { FaultOperation.paths.joined(separator: ", ") }

    /// The request `ck fault add` describes. The CLI checks its own syntax — which options go
    /// together, that each value parses — and the API checks the fault (AddFaultRequest).
    static func addRequest(_ inv: Invocation) throws -> AddFaultRequest {
        let a = inv.args
        func refuse(_ m: String) -> UsageError { inv.usageError(m) }
        var rate = try a.value("--rate").map { try fraction($0, "--rate", inv) }
        var opName = a.value("--op")
        if let raw = a.value("--drop-rate") {
            let deliver = FaultOperation.deliver.path
            if let o = opName, o != deliver { throw refuse("--drop-rate drops notifications (--op \(deliver)); it does not go with --op \(o)") }
            if rate != nil { throw refuse("--drop-rate and --rate exclude each other") }
            opName = deliver
            rate = try fraction(raw, "--drop-rate", inv)
        }
        guard let name = opName else { throw refuse("missing --op OP; valid operations: \(operations)") }
        guard let op = FaultOperation(path: name) else {
            throw refuse(AddFaultRequest.unknownOperation(name).reason + Suggestions.hint(name, among: FaultOperation.paths))
        }
        var code: FaultCode?
        if op == .deliver {
            if a.value("--error") != nil { throw refuse("a \(op.path) fault drops notifications; it takes no --error") }
        } else {
            guard let raw = a.value("--error") else { throw refuse("missing --error CODE; valid codes: \(FaultCode.allCases.map(\.rawValue).joined(separator: ", "))") }
            guard let c = FaultCode.named(raw) else {
                throw refuse(AddFaultRequest.unknownCode(raw).reason + Suggestions.hint(raw.uppercased(), among: FaultCode.allCases.map(\.rawValue)))
            }
            code = c
        }
        let retryAfter = try a.value("--retry-after").map { raw in
            guard let s = Int(raw), (0...86_400).contains(s) else { throw refuse("--retry-after must be a whole number of seconds, 0…86400, got '\(Names.describe(raw))'") }
            return s
        }
        let times = try inv.positiveInt("--times", max: 1_000_000_000)
        if times != nil && rate != nil { throw refuse("--times and --rate exclude each other") }
        let seed = try a.value("--seed").map { raw in
            guard rate != nil else { throw refuse("--seed goes with --rate") }
            guard let s = Int64(raw), s >= 0 else { throw refuse("--seed must be a non-negative integer, got '\(Names.describe(raw))'") }
            return s
        }
        // The global --zone and --device, as given on this line (not $CK_ZONE, $CK_DEVICE): the
        // zone and device the fault is for.
        return AddFaultRequest(op: op, error: code, retryAfter: retryAfter, times: times, rate: rate, seed: seed, zone: a.values("--zone").last,
                               record: a.value("--record"), user: a.value("--user"), device: a.value("--device"))
    }

    static func fraction(_ raw: String, _ option: String, _ inv: Invocation) throws -> Double {
        // A decimal fraction (0.25, 1, 5e-1), not Swift's hex floats or a subnormal.
        let decimal = !raw.isEmpty && raw.allSatisfy { "0123456789.eE-+".contains($0) }
        guard decimal, let p = Double(raw), p.isFinite, p >= 1e-9, p <= 1 else {
            throw inv.usageError("\(option) must be a fraction above 0 and at most 1, got '\(Names.describe(raw))'")
        }
        return p
    }
}
