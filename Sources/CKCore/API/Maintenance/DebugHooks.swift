import CKStore
import Foundation

extension CloudKitAPI {
    /// Arms the store's test hooks from a process's environment, as the end-to-end tests set
    /// them: `CK_DEBUG_CRASH_AT_OP=N` (exit at the Nth disk operation), `CK_DEBUG_ENOSPC_AT_OP=N`
    /// (a full disk from the Nth on), `CK_DEBUG_NO_INDEX` (every query reads the records),
    /// `CK_DEBUG_QUERY_PLAN` and `CK_DEBUG_TRACE_OPS` (each query's plan and each disk operation
    /// reported, a line each, to `report`), `CK_DEBUG_PUBLISH_DELAY_MS=N` (`ck serve` publishes
    /// each answered commit's files N ms late: the window between the answer and the files).
    public static func armDebugHooks(_ env: [String: String], report: @escaping @Sendable (String) -> Void) {
        CrashPoints.crashAtOperation = env["CK_DEBUG_CRASH_AT_OP"].flatMap { Int($0) }
        CrashPoints.noSpaceFromOperation = env["CK_DEBUG_ENOSPC_AT_OP"].flatMap { Int($0) }
        QueryDebug.indexesOff = env["CK_DEBUG_NO_INDEX"] != nil
        if env["CK_DEBUG_QUERY_PLAN"] != nil { QueryDebug.trace = { report("query plan: \($0)") } }
        if env["CK_DEBUG_TRACE_OPS"] != nil { CrashPoints.trace = { n, what in report("op \(n): \(what)") } }
        if let ms = env["CK_DEBUG_PUBLISH_DELAY_MS"].flatMap({ UInt32($0) }) { UnpublishedCommits.willPublish = { usleep(min(ms, 600_000) * 1000) } }
    }

    /// The bytes of a file the user named (a field's `@file`, an import, a schema, a key, a
    /// seed): links are followed, as any tool would; a directory or an unreadable file is
    /// BAD_REQUEST naming it `shownAs`.
    public static func readUserFile(_ path: String, shownAs shown: String) throws -> [UInt8] {
        try FileSystem.readUserFile(path, shownAs: shown)
    }
}
