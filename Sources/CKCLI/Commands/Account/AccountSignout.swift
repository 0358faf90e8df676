import CKCore

extension AccountCommands {
    static let signout: Command = Command(["account", "signout"], synopsis: "", summary: "Sign this device out") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.signOut(as: try inv.accountCaller()))
        return ExitCode.success
    }
}
