import CKCore

/// `ck account …`: the device's iCloud account.
enum AccountCommands {
    static var all: [Command] { [status, signin, signout, setStatus, events] }

    static func statusJSON(_ inv: Invocation) throws -> JSONValue {
        let caller = try inv.store.accounts.caller(actingAs: inv.globals.actingAs, deviceID: inv.globals.device)
        var o: [String: JSONValue] = ["status": .string(caller.status.rawValue)]
        if let u = caller.user {
            o["userRecordName"] = .string(u.userRecordName)
            o["appleID"] = .string(u.appleID)
        }
        return .object(o)
    }

    static let status: Command = Command(["account"], synopsis: "[--require STATUS]", summary: "Show the account status of this device", endpoint: "account/status",
        options: [OptionSpec("--require", value: "STATUS", help: "fail (exit 5, nothing on stdout) unless the status is STATUS, e.g. available")],
        details: "Prints {status, userRecordName?, appleID?}. Status is one of available, noAccount,\nrestricted, couldNotDetermine, temporarilyUnavailable. In a script:\nck account --require available >/dev/null || exit.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let doc = try statusJSON(inv)
        if let raw = inv.args.value("--require") {
            guard let wanted = AccountStatus(rawValue: raw) else {
                throw inv.usageError("invalid value '\(raw)' for --require; valid values: \(AccountStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let actual = doc["status"]?.stringValue ?? ""
            if actual != wanted.rawValue {
                let why = AccountStatus(rawValue: actual).map { $0 == .available ? "" : ": " + $0.refusal } ?? ""
                throw CloudKitError(.authenticationRequired, "the account status is \(actual), not \(wanted.rawValue)\(why)")
            }
        }
        inv.emit(doc)
        return ExitCode.success
    }

    static let signin: Command = Command(["account", "signin"], synopsis: "APPLE-ID [--given-name G] [--family-name F] [--phone P]",
        summary: "Sign this device in (creating the iCloud user on first use)",
        options: [
            OptionSpec("--given-name", value: "G", help: "the user's given name"),
            OptionSpec("--family-name", value: "F", help: "the user's family name"),
            OptionSpec("--phone", value: "P", help: "phone number in international form, e.g. +1 408 555 0100"),
        ],
        details: "The first sign-in of an Apple ID creates its user with a stable user record name\n(_ followed by 32 hex digits) that is never reused for another Apple ID.") { inv in
        let id = try inv.positionals(min: 1, max: 1, what: "Apple ID")[0]
        try inv.store.accounts.signIn(appleID: id, givenName: inv.args.value("--given-name"),
                                      familyName: inv.args.value("--family-name"), phone: inv.args.value("--phone"))
        inv.emit(try statusJSON(inv))
        return ExitCode.success
    }

    static let signout: Command = Command(["account", "signout"], synopsis: "", summary: "Sign this device out") { inv in
        _ = try inv.positionals(max: 0, what: "")
        try inv.store.accounts.signOut()
        inv.emit(try statusJSON(inv))
        return ExitCode.success
    }

    static let setStatus: Command = Command(["account", "set-status"], synopsis: "STATUS",
        summary: "Simulate an account status (restricted, temporarilyUnavailable, …)",
        details: "STATUS is one of: \(AccountStatus.allCases.map(\.rawValue).joined(separator: ", ")).") { inv in
        let raw = try inv.positionals(min: 1, max: 1, what: "status")[0]
        guard let st = AccountStatus(rawValue: raw) else {
            throw inv.usageError("unknown status '\(raw)'; expected one of \(AccountStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        try inv.store.accounts.setStatus(st)
        inv.emit(try statusJSON(inv))
        return ExitCode.success
    }

    static let events: Command = Command(["account", "events"], synopsis: "[--since SEQ] [--follow [--timeout S]]",
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
        func after(_ events: [JSONValue], _ seq: Int64) -> [JSONValue] { events.filter { ($0["seq"]?.int64Value ?? 0) > seq } }
        guard inv.args.has("--follow") else {
            inv.emit(["events": .array(after(try inv.store.accounts.events(), since))], listKey: "events")
            return ExitCode.success
        }
        var last = since
        try Follow.run(io: inv.io, timeout: timeout) {
            for e in after(try inv.store.accounts.events(), last) {
                inv.io.writeOut(JSONWriter.line(e))
                last = max(last, e["seq"]?.int64Value ?? last)
            }
        }
        return ExitCode.success
    }
}
