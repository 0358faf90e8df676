import CKCore
import CKModel

extension AccountCommands {
    static let status: CommandSpec = CommandSpec(synopsis: "[--require STATUS]", summary: "Show the account status of this device",
        options: [OptionSpec("--require", value: "STATUS", help: "fail (exit 5, nothing on stdout) unless the status is STATUS, e.g. available")],
        details: "Prints {status, userRecordName?, appleID?}. Status is one of available, noAccount,\nrestricted, couldNotDetermine, temporarilyUnavailable. In a script:\nck account --require available >/dev/null || exit.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        var wanted: AccountStatus?
        if let raw = inv.args.value("--require") {
            guard let s = AccountStatus(rawValue: raw) else {
                throw inv.usageError("invalid value '\(raw)' for --require; valid values: \(AccountStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            wanted = s
        }
        inv.print(try inv.api.accountStatus(AccountStatusRequest(require: wanted), as: try inv.accountCaller()))
        return ExitCode.success
    }
}
