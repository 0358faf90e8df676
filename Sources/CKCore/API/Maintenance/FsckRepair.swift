import CKJSON
import CKModel
import CKStore

/// ck's check of the data directory, `fsck`: every file and every history, and the repair of
/// what a crash, a full disk or a hand edit left (Docs/reliability.md). It takes the locks
/// writers take, so it is safe beside them.
public struct FsckRequest: Sendable {
    /// false: report only, changing and creating nothing (`--dry-run`).
    public var repair: Bool

    public init(repair: Bool = true) { self.repair = repair }
}

/// `{problems: [{path, problem, repaired}], clean, checked: {zones, records, historyEntries,
/// files}}`: what was found, and whether it was repaired. NDJSON and tables show a problem a
/// line.
public struct FsckResponse: ResponseBody {
    let report: FsckReport

    /// Whether a problem remains: one not repaired (with `repair` false, any found).
    public var problemsRemain: Bool { !report.clean }

    public var listKey: String? { "problems" }
    public var items: [any JSONEncodable] {
        report.problems.map { JSONValue.object(["path": .string($0.path), "problem": .string($0.problem), "repaired": .bool($0.repaired)]) }
    }
    public var members: [String: JSONValue] {
        ["clean": .bool(report.problems.isEmpty),
         "checked": ["zones": .int(Int64(report.zones)), "records": .int(Int64(report.records)),
                     "historyEntries": .int(report.historyEntries), "files": .int(Int64(report.files))]]
    }
}

extension CloudKitAPI {
    /// Checks the whole data directory — every container, environment, database and device —
    /// and, with `repair`, mends what it can. An operation of ck's own: no fault fails it, no
    /// account is needed.
    public func fsck(_ r: FsckRequest) throws -> FsckResponse {
        FsckResponse(report: try Fsck.run(paths: store.paths, repair: r.repair, clock: clock))
    }
}
