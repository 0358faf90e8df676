import CKCore
import CKJSON

/// `ck account …`: the device's iCloud account; `ck whoami`: the caller's identity.
enum AccountCommands {
    /// `{status, userRecordName?, appleID?}` of the caller (`ck status` shows it).
    static func statusJSON(_ inv: Invocation) throws -> JSONValue {
        try inv.api.accountSummary(as: try inv.accountCaller()).jsonValue
    }
}

extension Invocation {
    /// The caller of an account command: it changes the device, so no container is needed.
    func accountCaller() throws -> Caller {
        Caller(container: (try? container()) ?? GlobalOptions.defaultContainer, environment: globals.environment, scope: globals.scope,
               user: globals.actingAs.map(Caller.User.appleID) ?? .device, deviceID: globals.device)
    }
}
