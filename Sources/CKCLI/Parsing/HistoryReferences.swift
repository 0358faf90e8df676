import CKCore
import CKModel

/// Points in a zone's history as commands take them (`--at REF`, `ck show REF`, …): a change
/// token, ZONE@SEQ (or SEQ with --zone), HEAD, a tag or a time. Times without an offset are
/// local ($TZ).
enum HistoryReferences {
    static let help = "a change token, ZONE@SEQ (or SEQ with --zone), HEAD, a tag, or a time (2026-11-20T10:00, yesterday, 2h ago)"

    static let atOption = OptionSpec("--at", value: "REF", help: "as of this point in the zone's history: \(help)")
}

extension Invocation {
    /// Reads a reference; times without an offset are local ($TZ).
    func reference(_ raw: String) throws -> HistoryReference {
        try HistoryReference.parse(raw, now: Clock.system.now(), timeZone: FieldText.localTimeZone(io.environment))
    }

    /// The point `--at` names, if given.
    func atReference() throws -> HistoryReference? { try args.value("--at").map(reference) }
}
