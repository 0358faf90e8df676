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

    static let status: Command = Command(["account"], synopsis: "", summary: "Show the account status of this device",
        details: "Prints {status, userRecordName?, appleID?}. Status is one of available, noAccount,\nrestricted, couldNotDetermine, temporarilyUnavailable.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.emit(try statusJSON(inv))
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

    static let events: Command = Command(["account", "events"], synopsis: "[--follow [--timeout S]]",
        summary: "List account-changed events (or follow them as they happen)",
        options: [
            OptionSpec("--follow", help: "keep running and print each new event as an NDJSON line"),
            OptionSpec("--timeout", value: "S", help: "with --follow: stop after S seconds"),
        ],
        details: "Each sign-in, sign-out or status change appends an event {seq, timestamp, type:\n\"accountChanged\", status, userRecordName?, appleID?}, like CloudKit's CKAccountChanged.\nWith --follow, the events so far are printed first, then new ones as they arrive; ck exits\n0 at the timeout or on SIGINT or SIGTERM, and 141 within a second of the reader closing\nthe pipe.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let timeout = try Follow.parseTimeout(inv)
        guard inv.args.has("--follow") else {
            inv.emit(["events": .array(try inv.store.accounts.events())], listKey: "events")
            return ExitCode.success
        }
        var printed = 0
        try Follow.run(io: inv.io, timeout: timeout) {
            let all = try inv.store.accounts.events()
            for e in all.dropFirst(printed) { inv.io.writeOut(JSONWriter.line(e)) }
            printed = max(printed, all.count)
        }
        return ExitCode.success
    }
}
