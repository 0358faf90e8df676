import CKCore
import CKModel

extension FaultCommands {
    static let add: CommandSpec = CommandSpec(synopsis: "--op OP --error CODE [--retry-after S] [--times N | --rate P [--seed S]] [--zone Z] [--record R] [--user U] [--device D] | --drop-rate P",
        summary: "Arm a fault: the next matching operations fail with a CloudKit error",
        options: [
            OptionSpec("--op", value: "OP", help: "the client operation to fail: \(Endpoint.allCases.map(\.path).joined(separator: ", ")), or * (all but notifications/deliver)"),
            OptionSpec("--error", value: "CODE", help: "the error: \(FaultCode.allCases.map(\.rawValue).joined(separator: ", ")) (REQUEST_RATE_LIMITED is THROTTLED)"),
            OptionSpec("--retry-after", value: "S", help: "seconds to wait before retrying (retryAfter), for \(AddFaultRequest.retryCodes)"),
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
        let request = try addRequest(inv)
        let response: FaultsResponse
        do { response = try inv.api.addFault(request) } catch let e as CloudKitError where e.code == .badRequest {
            // Every member of the fault comes from an option of this line: an invalid one is a usage error.
            throw inv.usageError(e.reason)
        }
        inv.print(response)
        return ExitCode.success
    }
}
