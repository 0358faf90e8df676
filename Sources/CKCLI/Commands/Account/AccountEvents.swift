import CKCore
import CKJSON

extension AccountCommands {
    static let events: CommandSpec = CommandSpec(synopsis: "[--since SEQ] [--follow [--timeout S]]",
        summary: "List account-changed events (or follow them as they happen)",
        options: [
            OptionSpec("--since", value: "SEQ", help: "only events after SEQ (the seq of the last event already seen)"),
            OptionSpec("--follow", help: "keep running and print each new event as an NDJSON line (whatever --format)"),
            OptionSpec("--timeout", value: "S", help: "with --follow: stop after S seconds"),
        ],
        details: "Each sign-in, sign-out or status change appends an event {seq, timestamp, type:\n\"accountChanged\", status, userRecordName?, appleID?}, like CloudKit's CKAccountChanged.\nWith --follow, the events so far are printed first, then new ones as they arrive; ck exits\n0 at the timeout or on SIGINT or SIGTERM, and 141 within a second of the reader closing\nthe pipe. --since SEQ leaves out the events up to SEQ: a script that remembers the last seq\nit handled resumes there (ck account events --follow --since 12).") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let timeout = try Follow.parseTimeout(inv)
        var since: Int64 = 0
        if let raw = inv.args.value("--since") {
            guard let n = Int64(raw), n >= 0 else { throw inv.usageError("--since must be an event seq (a non-negative integer), got '\(raw)'") }
            since = n
        }
        let caller = try inv.accountCaller()
        guard inv.args.has("--follow") else {
            inv.print(try inv.api.accountEvents(AccountEventsRequest(since: since), as: caller))
            return ExitCode.success
        }
        var last = since
        try Follow.run(io: inv.io, timeout: timeout) {
            for e in try inv.api.accountEvents(AccountEventsRequest(since: last), as: caller).items.map(\.jsonValue) {
                inv.io.writeOut(JSONWriter.line(e))
                last = max(last, e["seq"]?.int64Value ?? last)
            }
        }
        return ExitCode.success
    }
}
