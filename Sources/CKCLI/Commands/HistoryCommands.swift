import CKCore

/// `ck log`, `show`, `diff`, `blame`, `restore`, `revert`, `gc`: the zone histories read as
/// git reads commits, written back, and aged (Docs/history.md). Points in history are
/// references (HistoryReference, Parsing/HistoryReferences.swift): a change token, ZONE@SEQ
/// (or SEQ with --zone), HEAD, a tag or a time.
enum HistoryCommands {
    static let referenceHelp = HistoryReferences.help

    static let dryRun = OptionSpec("--dry-run", help: "print what would change, change nothing")

    /// Prints a restore's or a revert's changes: exit 9 when any record failed (one record
    /// that failed is the command's error).
    static func finish(_ inv: Invocation, _ response: HistoryWriteResponse) throws -> Int32 {
        if response.results.count == 1, let e = response.results[0].error { throw e }
        inv.print(response)
        return inv.batchExit(response.results, noun: "records")
    }
}
