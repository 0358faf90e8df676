import CKCore
import CKModel

/// `ck share create|accept|list|get|add-participant|remove-participant|leave|delete`:
/// CKShare between the users of this device (Docs/sharing.md).
enum ShareCommands {
    static let shareArgument = "SHARE is a share URL (https://www.icloud.com/share/…), its short GUID, or with --zone the\nshare record's name or the name of the record it shares."

    /// `APPLE-ID[:readOnly|readWrite]` arguments.
    static func participants(_ inv: Invocation, _ raw: [String]) throws -> [ShareParticipantRequest] {
        try raw.map { a in
            do { return try ShareParticipantRequest.parse(argument: a) } catch let e as CloudKitError {
                throw inv.usageError("--participant '\(a)': \(e.reason)")
            }
        }
    }

    /// Runs a change of the share SHARE (the first positional) names.
    static func update(_ inv: Invocation, _ reference: String, _ update: ShareUpdate) throws -> Int32 {
        inv.print(try inv.api.updateShare(ShareUpdateRequest(reference: reference, zoneName: inv.zoneGiven, update: update), as: try inv.caller()))
        return ExitCode.success
    }
}
