import CKCore

/// `ck account …`: the device's iCloud account; `ck whoami`: the caller's identity.
enum AccountCommands {
    static var all: [Command] { [status, signin, signout, setStatus, events] }

    /// `{status, userRecordName?, appleID?}` of the caller (`ck status` shows it).
    static func statusJSON(_ inv: Invocation) throws -> JSONValue {
        try inv.api.accountSummary(as: try inv.accountCaller()).jsonValue
    }
}
