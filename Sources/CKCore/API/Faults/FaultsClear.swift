import CKModel
import CKStore

/// Disarming faults: one by its ID, or all of them (nil).
public struct ClearFaultsRequest: Sendable {
    public var id: String?

    public init(id: String? = nil) { self.id = id }
}

extension CloudKitAPI {
    /// Removes the fault named (NOT_FOUND when none has that ID) or every one; clearing all
    /// removes `faults.json` whatever it holds, so a damaged file can always be cleared.
    /// Answers with the faults removed, `{faults: [{id, deleted: true}]}`.
    public func clearFaults(_ r: ClearFaultsRequest) throws -> FaultsResponse {
        FaultsResponse(try FaultStore(paths: store.paths).clear(id: r.id), deleted: true)
    }
}
