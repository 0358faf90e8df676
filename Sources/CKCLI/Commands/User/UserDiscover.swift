import CKCore

extension UserCommands {
    static let discover: Command = Command(["user", "discover"], synopsis: "--email E | --phone P | --record-name R",
        summary: "Find another user's identity (only if they made themselves discoverable)", endpoint: .usersDiscover,
        options: [
            OptionSpec("--email", value: "E", help: "the user's Apple ID email address"),
            OptionSpec("--phone", value: "P", help: "the user's phone number"),
            OptionSpec("--record-name", value: "R", help: "the user's record name (_ + 32 hex digits)"),
        ],
        details: "Prints the users/discover response {\"users\": [{userRecordName, lookupInfo, nameComponents}]}.\nNOT_FOUND (exit 3) unless that user granted userDiscoverability in this container; the\nerror does not reveal whether the user exists.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let given = ["--email", "--phone", "--record-name"].filter { inv.args.value($0) != nil }
        guard given.count == 1, let value = inv.args.value(given[0]) else { throw inv.usageError("give exactly one of --email, --phone, --record-name") }
        let lookup: UserLookup = given[0] == "--email" ? .email(value) : given[0] == "--phone" ? .phone(value) : .recordName(value)
        let response = try inv.api.discoverUsers(UsersDiscoverRequest(lookups: [lookup]), as: try inv.caller())
        if let e = response.failures.first { throw e }
        inv.print(response)
        return ExitCode.success
    }
}
