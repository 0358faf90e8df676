import CKJSON
import CKModel
import CKStore

/// `account/status` (native `CKContainer.accountStatus`): `{status, userRecordName?, appleID?}`
/// for the caller — the device's account status, and the user acting (the device's account or
/// `--as`). `require`: fail with AUTHENTICATION_REQUIRED, naming the status, unless it is that.
public struct AccountStatusRequest: Sendable {
    public var require: AccountStatus?

    public init(require: AccountStatus? = nil) {
        self.require = require
    }
}

extension CloudKitAPI {
    public func accountStatus(_ r: AccountStatusRequest, as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(.accountStatus, caller, need: .none)
        let p = ctx.principal
        if let wanted = r.require, p.status != wanted {
            var e = CloudKitError(.authenticationRequired, "the account status is \(p.status.rawValue), not \(wanted.rawValue)\(p.status == .available ? "" : ": " + p.status.refusal)")
            if p.status != .available { e.nextStep = .signIn }
            e.nativeCode = p.status.refusalNativeCode
            throw e
        }
        return statusBody(p)
    }

    /// The caller's account as `account/status` shows it, for ck's own summaries (`ck
    /// status`): no endpoint, so no fault fails it.
    public func accountSummary(as caller: Caller) throws -> DocumentBody {
        statusBody(try principal(caller))
    }

    func statusBody(_ p: Principal) -> DocumentBody {
        var o: [String: JSONValue] = ["status": .string(p.status.rawValue)]
        if let u = p.user {
            o["userRecordName"] = .string(u.userRecordName)
            o["appleID"] = .string(u.appleID)
        }
        return DocumentBody(o)
    }
}
