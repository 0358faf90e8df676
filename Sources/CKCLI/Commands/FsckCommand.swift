import CKCore

/// `ck fsck`: check the data directory and repair what a crash left.
enum FsckCommand {
    static let command: Command = Command(["fsck"], synopsis: "[--dry-run]",
        summary: "Check every file and change history; repair what a crash left",
        options: [OptionSpec("--dry-run", help: "report problems without repairing them")],
        details: """
        Finds half-written temporary files, interrupted zone deletions, torn history tails
        (log bytes of a write that was never acknowledged, a torn index entry), record files
        missing, torn, stale or left behind relative to the change history (the write-ahead
        log, which holds every saved record whole), records with no history entry (adopted),
        gaps in a history, and files that are not valid JSON. Prints {problems: [{path,
        problem, repaired}], clean, checked}. Exit 0 when the directory is clean or was
        repaired; 1 when a problem remains (always, with --dry-run, if any was found).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let repair = !inv.args.has("--dry-run")
        let report = try Fsck.run(paths: inv.store.paths, repair: repair)
        let problems: [JSONValue] = report.problems.map {
            ["path": .string($0.path), "problem": .string($0.problem), "repaired": .bool($0.repaired)]
        }
        inv.emit(["problems": .array(problems), "clean": .bool(report.problems.isEmpty),
                  "checked": ["zones": .int(Int64(report.zones)), "records": .int(Int64(report.records)),
                              "historyEntries": .int(report.historyEntries), "files": .int(Int64(report.files))]],
                 listKey: "problems")
        return report.clean ? ExitCode.success : ExitCode.internalFailure
    }
}
