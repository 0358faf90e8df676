import CKModel
import CKStore

extension CloudKitAPI {
    /// Resets the container's development environment, as the CloudKit console's Reset
    /// Environment does: its schema becomes production's, and every development record,
    /// subscription, notification and bookmark is deleted, all or nothing (a reset a crash
    /// interrupts is finished by whoever next uses the environment). Production is untouched.
    /// Answers `{reset: true, environment: "development"}`.
    public func resetSchema(as caller: Caller) throws -> DocumentBody {
        try schemaAdmin(caller).resetDevelopment()
        return DocumentBody(["reset": true, "environment": "development"])
    }
}
