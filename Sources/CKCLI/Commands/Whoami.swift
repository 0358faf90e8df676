import CKCore

extension AccountCommands {
    static let whoami: CommandSpec = CommandSpec(synopsis: "", summary: "Show the caller's user identity",
        details: "Prints the users/caller identity {userRecordName, lookupInfo: {emailAddress, phoneNumber?},\nnameComponents?}. Name components appear only after 'ck permission request\nuserDiscoverability' granted it for this container.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.print(try inv.api.callerIdentity(as: try inv.caller()))
        return ExitCode.success
    }
}
