import CKCore
import CKModel

extension AccountCommands {
    static let setStatus: CommandSpec = CommandSpec(synopsis: "STATUS",
        summary: "Simulate an account status (restricted, temporarilyUnavailable, …)",
        details: "STATUS is one of: \(AccountStatus.allCases.map(\.rawValue).joined(separator: ", ")).") { inv in
        let raw = try inv.positionals(min: 1, max: 1, what: "status")[0]
        guard let st = AccountStatus(rawValue: raw) else {
            throw inv.usageError("unknown status '\(raw)'; expected one of \(AccountStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        inv.print(try inv.api.setAccountStatus(st, as: try inv.accountCaller()))
        return ExitCode.success
    }
}
