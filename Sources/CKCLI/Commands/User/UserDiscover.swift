import CKCore
import CKModel

extension UserCommands {
    static let discover: CommandSpec = CommandSpec(synopsis: "(--email E | --phone P | --record-name R)…",
        summary: "Find other users' identities (only of users who made themselves discoverable)",
        options: [
            OptionSpec("--email", value: "E", repeatable: true, help: "a user's Apple ID email address"),
            OptionSpec("--phone", value: "P", repeatable: true, help: "a user's phone number"),
            OptionSpec("--record-name", value: "R", repeatable: true, help: "a user's record name (_ + 32 hex digits)"),
        ],
        details: "Prints the users/discover response {\"users\": [{userRecordName, lookupInfo, nameComponents}]}:\none identity per user found, whatever the number of lookups that found them. A user who\ndid not grant userDiscoverability in this container is not found, as one who does not\nexist: an empty list (exit 0), as the native API answers nil.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let lookups: [UserLookup] = inv.args.values("--email").map(UserLookup.email) + inv.args.values("--phone").map(UserLookup.phone)
            + inv.args.values("--record-name").map(UserLookup.recordName)
        guard !lookups.isEmpty else { throw inv.usageError("give at least one --email, --phone or --record-name") }
        let response = try inv.api.discoverUsers(UsersDiscoverRequest(lookups: lookups), as: try inv.caller())
        if let e = response.failures.first { throw e }
        inv.print(response)
        return ExitCode.success
    }
}
