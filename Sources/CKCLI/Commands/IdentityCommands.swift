import CKCore

/// `ck whoami`, `ck permission request|status`, `ck user discover`.
enum IdentityCommands {
    static var all: [Command] { [whoami, permissionRequest, permissionStatus, discover] }

    static func signedInUser(_ inv: Invocation, for what: String) throws -> UserAccount {
        let caller = try inv.store.accounts.caller(actingAs: inv.globals.actingAs, deviceID: inv.globals.device)
        return try caller.requireUser(for: what)
    }

    static let whoami: Command = Command(["whoami"], synopsis: "", summary: "Show the caller's user identity", endpoint: "users/caller",
        details: "Prints {userRecordName, lookupInfo: {emailAddress, phoneNumber?}, nameComponents?}.\nName components appear only after 'ck permission request userDiscoverability' granted it\nfor this container.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let user = try signedInUser(inv, for: "fetching the user identity")
        inv.emit(try inv.store.identities.identity(of: user, container: try inv.container()))
        return ExitCode.success
    }

    static func permissionName(_ inv: Invocation) throws -> String {
        let p = try inv.positionals(min: 1, max: 1, what: "permission name (userDiscoverability)")[0]
        guard p == "userDiscoverability" else { throw inv.usageError("unknown permission '\(p)'; CloudKit has one: userDiscoverability") }
        return p
    }

    static let permissionRequest: Command = Command(["permission", "request"], synopsis: "userDiscoverability [--deny]",
        summary: "Answer the discoverability prompt for this container (grant, or --deny)",
        options: [OptionSpec("--deny", help: "record that the user declined")]) { inv in
        let name = try permissionName(inv)
        let user = try signedInUser(inv, for: "requesting a permission")
        let st = try inv.store.identities.setDiscoverability(container: try inv.container(), user: user, granted: !inv.args.has("--deny"))
        inv.emit(["permission": .string(name), "status": .string(st.rawValue)])
        return ExitCode.success
    }

    static let permissionStatus: Command = Command(["permission", "status"], synopsis: "[userDiscoverability]",
        summary: "Show the discoverability permission for this container",
        details: "Status is initialState (never asked), denied or granted.") { inv in
        if !inv.args.positionals.isEmpty { _ = try permissionName(inv) }
        let user = try signedInUser(inv, for: "reading a permission")
        let st = try inv.store.identities.discoverability(container: try inv.container(), user: user)
        inv.emit(["permission": "userDiscoverability", "status": .string(st.rawValue)])
        return ExitCode.success
    }

    static let discover: Command = Command(["user", "discover"], synopsis: "--email E | --phone P | --record-name R",
        summary: "Find another user's identity (only if they made themselves discoverable)", endpoint: "users/discover",
        options: [
            OptionSpec("--email", value: "E", help: "the user's Apple ID email address"),
            OptionSpec("--phone", value: "P", help: "the user's phone number"),
            OptionSpec("--record-name", value: "R", help: "the user's record name (_ + 32 hex digits)"),
        ],
        details: "Prints the users/discover response {\"users\": [{userRecordName, lookupInfo, nameComponents}]}.\nNOT_FOUND (exit 3) unless that user granted userDiscoverability in this container; the\nerror does not reveal whether the user exists.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let given = ["--email", "--phone", "--record-name"].filter { inv.args.value($0) != nil }
        guard given.count == 1 else { throw inv.usageError("give exactly one of --email, --phone, --record-name") }
        _ = try signedInUser(inv, for: "discovering users")
        let lookup: IdentityStore.Lookup
        switch given[0] {
        case "--email": lookup = .email(inv.args.value("--email")!)
        case "--phone": lookup = .phone(inv.args.value("--phone")!)
        default: lookup = .recordName(inv.args.value("--record-name")!)
        }
        inv.emit(["users": [try inv.store.identities.discover(lookup, container: try inv.container())]], listKey: "users")
        return ExitCode.success
    }
}
