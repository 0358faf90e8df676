import CKCore

/// The next step a failed command's user can take, named after its reason (as git's "hint:"
/// lines do). Said in text errors only: the JSON envelope stays CloudKit's.
enum NextSteps {
    static func hint(for e: CloudKitError, command: [String], globals: GlobalOptions) -> String? {
        if let step = e.nextStep, let words = words(step) { return words }
        let reason = e.reason
        switch e.code {
        // Only about a record the caller may read (else the error says nothing more of it).
        case .exists where command == ["record", "save"]:
            guard let tag = e.serverRecord?.recordChangeTag else { return nil }
            return "to update it, pass --tag \(tag) (its current tag) or --force"
        case .conflict where command == ["record", "save"] || command == ["record", "delete"]:
            guard let tag = e.serverRecord?.recordChangeTag else { return nil }
            return "fetch it again (ck record get \(quoted(e.recordName ?? "NAME"))) and retry with --tag \(tag), or pass --force to overwrite"
        case .zoneNotFound where command == ["zone", "delete"] || command == ["zone", "purge"]:
            return "pass --if-exists to treat a missing zone as \(command[1] == "purge" ? "purged" : "deleted")"
        case .zoneNotFound:
            guard let z = e.zoneID?.zoneName, !reason.contains("deleted while") else { return nil }
            switch globals.scope {
            case .private: return "create it with ck zone create \(quoted(z))"
            case .public: return "the public database has only _defaultZone"
            case .shared: return "zones appear in the shared database when a share is accepted"
            }
        case .changeTokenExpired where command.last == "changes":
            return "fetch again from the start: --from-start (then keep the new syncToken)"
        case .changeTokenExpired:
            // A history command's point lies before what 'ck gc' kept.
            return "'ck log' shows what the history retains"
        case .authenticationRequired where !reason.contains("ck account signin"):
            return "check the account with ck account; sign in with ck account signin APPLE-ID"
        case .badRequest where e.nextStep == .deploySchema || reason.contains("in production schema"):
            return "deploy the development schema first: ck schema deploy"
        case .limitExceeded where reason.contains("operations; this one has"):
            return "split it into requests of at most \(Limits.operationsPerBatch) operations (ck import --batch N does)"
        case .notFound where command == ["record", "delete"]:
            return "pass --if-exists to treat a missing record as deleted"
        default:
            return nil
        }
    }

    /// A next step the core named (NextStep), as a command line.
    static func words(_ step: NextStep) -> String? {
        switch step {
        case .signIn: return "check the account with ck account; sign in with ck account signin APPLE-ID"
        case .leaveShare: return "to stop seeing it, leave its share: ck share leave SHARE (its URL or short GUID)"
        case .signInUser(let appleID): return "sign \(quoted(appleID)) in once on this device: ck account signin \(quoted(appleID))"
        default: return nil
        }
    }

    /// A word as a shell would need it: plain when safe, else in single quotes.
    static func quoted(_ s: String) -> String {
        let safe = !s.isEmpty && s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains(Character($0)) || "-_.:/@+".unicodeScalars.contains($0)) }
        return safe ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

import Foundation
