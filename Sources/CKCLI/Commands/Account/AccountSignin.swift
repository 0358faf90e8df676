import CKCore

extension AccountCommands {
    static let signin: CommandSpec = CommandSpec(synopsis: "APPLE-ID [--given-name G] [--family-name F] [--phone P]",
        summary: "Sign this device in (creating the iCloud user on first use)",
        options: [
            OptionSpec("--given-name", value: "G", help: "the user's given name"),
            OptionSpec("--family-name", value: "F", help: "the user's family name"),
            OptionSpec("--phone", value: "P", help: "phone number in international form, e.g. +1 408 555 0100"),
        ],
        details: "The first sign-in of an Apple ID creates its user with a stable user record name\n(_ followed by 32 hex digits) that is never reused for another Apple ID.") { inv in
        let id = try inv.positionals(min: 1, max: 1, what: "Apple ID")[0]
        let req = SignInRequest(appleID: id, givenName: inv.args.value("--given-name"), familyName: inv.args.value("--family-name"),
                                phoneNumber: inv.args.value("--phone"))
        inv.print(try inv.api.signIn(req, as: try inv.accountCaller()))
        return ExitCode.success
    }
}
