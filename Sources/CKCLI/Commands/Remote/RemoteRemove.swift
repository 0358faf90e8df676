import CKCore
import CKModel

extension RemoteCommands {
    static let remove: CommandSpec = CommandSpec(synopsis: "NAME", summary: "Forget a remote and its tracking state",
        details: """
        Prints the remote as it was. Its tracking state goes in every database; the local records
        stay, and so do the credentials filed under its URL (another data directory may use them).
        """) { inv in
        let name = try inv.positionals(min: 1, max: 1, what: "remote name")[0]
        inv.print(DocumentBody(try inv.api.removeRemote(name).json.objectValue ?? [:]))
        return ExitCode.success
    }

    static let rename: CommandSpec = CommandSpec(synopsis: "OLD NEW", summary: "Rename a remote, its tracking state with it",
        details: "Prints the remote under its new name. EXISTS (exit 4) when NEW is taken.") { inv in
        let p = try inv.positionals(min: 2, max: 2, what: "old and new remote names")
        do { inv.print(DocumentBody(try inv.api.renameRemote(p[0], to: p[1]).json.objectValue ?? [:])) } catch let e as CloudKitError where e.code == .badRequest {
            throw inv.usageError(e.reason)
        }
        return ExitCode.success
    }
}
