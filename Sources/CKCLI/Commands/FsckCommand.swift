import CKCore

/// `ck fsck`: check the data directory and repair what a crash left.
enum FsckCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[--dry-run]",
        summary: "Check every file and change history; repair what a crash left",
        options: [OptionSpec("--dry-run", help: "report problems without repairing them")],
        details: """
        Takes the locks writers take, so it is safe beside them. Cuts what an interrupted commit
        left after a history's last committed entry; applies committed entries not yet in the
        record files; restores record files missing, torn or stale from the history (which holds
        every record whole), removes deleted ones, adopts hand-made ones into the history;
        rebuilds the reference index from the records; records zone changes missing from the
        database history; finishes interrupted zone creations, deletions and schema resets;
        cuts torn notification and account-event logs; removes temporary files of processes
        that are gone; makes files private. Reports symbolic links and special files inside the
        data directory (never followed) and damage it cannot repair. Prints {problems: [{path,
        problem, repaired}], clean, checked}. Exit 0 when the directory is clean or was
        repaired; 1 when a problem remains (with --dry-run, which changes nothing, if any was
        found).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let response = try inv.api.fsck(FsckRequest(repair: !inv.args.has("--dry-run")))
        inv.print(response)
        return response.problemsRemain ? ExitCode.internalFailure : ExitCode.success
    }
}
