import CKModel
import CKStore

extension CloudKitAPI {
    /// The armed faults, in the order they are checked, with what is left of each (`times`,
    /// `evaluations`). INTERNAL_ERROR when `faults.json` is damaged (clearing them all mends it).
    public func faults() throws -> FaultsResponse {
        FaultsResponse(try FaultStore(paths: store.paths).list())
    }
}
